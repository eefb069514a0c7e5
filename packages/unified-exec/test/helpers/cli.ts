// Builds the `uexec` CLI from source once per test file and runs it as a real child process.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'tsup';

const PACKAGE_DIR = resolve(import.meta.dirname, '../..');

/**
 * Bundles `src/cli/uexec.ts` (what `dist/cli/uexec.js` is) into a private directory under the
 * package's node_modules, so its imports resolve like the published build's, without depending
 * on (or racing) a `pnpm build`.
 */
export async function buildUexec(): Promise<{ readonly script: string; remove(): Promise<void> }> {
  const outDir = join(PACKAGE_DIR, 'node_modules', '.cache', `uexec-cli-test-${process.pid}-${Date.now()}`);
  await build({
    entry: { uexec: join(PACKAGE_DIR, 'src/cli/uexec.ts') },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    dts: false,
    sourcemap: false,
    clean: false,
    silent: true,
    config: false,
  });
  return { script: join(outDir, 'uexec.js'), remove: () => rm(outDir, { recursive: true, force: true }) };
}

/** A running `uexec` child with its output collected. */
export class UexecProcess implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    script: string,
    args: readonly string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ) {
    this.child = spawn(process.execPath, [script, ...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolvePromise) => {
      this.child.once('exit', (code, signal) => resolvePromise({ code, signal }));
    });
  }

  /** Writes to its stdin. */
  send(text: string): void {
    this.child.stdin.write(text);
  }

  /** Kills it if still running and waits for its exit. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Runs `uexec` to completion with `input` on stdin. */
export async function runUexec(
  script: string,
  args: readonly string[],
  options: { input?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  await using child = new UexecProcess(script, args, options);
  child.child.stdin.end(options.input ?? '');
  const { code } = await child.exited;
  return { code, stdout: child.stdout, stderr: child.stderr };
}
