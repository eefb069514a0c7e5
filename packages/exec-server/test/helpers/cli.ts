// Builds the `execd-server` CLI from source once per test file and runs it as a real child.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'tsup';
import { waitFor } from './wait-for.ts';

const PACKAGE_DIR = resolve(import.meta.dirname, '../..');

/**
 * Bundles `src/cli/execd-server.ts` into a private directory under the package's node_modules
 * (so its external imports resolve like the published build's) and returns the script path and a
 * cleanup function.
 */
export async function buildCli(): Promise<{ readonly script: string; remove(): Promise<void> }> {
  const outDir = join(PACKAGE_DIR, 'node_modules', '.cache', `execd-cli-test-${process.pid}-${Date.now()}`);
  await build({
    entry: { 'execd-server': join(PACKAGE_DIR, 'src/cli/execd-server.ts') },
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
  return {
    script: join(outDir, 'execd-server.js'),
    remove: () => rm(outDir, { recursive: true, force: true }),
  };
}

/** A running CLI child with its output collected. */
export class CliProcess implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(script: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    this.child = spawn(process.execPath, [script, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
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

  /** Waits for the first stdout line (the URL). */
  async firstLine(): Promise<string> {
    const line = await waitFor(
      () => (this.stdout.includes('\n') ? this.stdout.slice(0, this.stdout.indexOf('\n')) : undefined),
      {
        what: `the CLI's first stdout line (stderr so far: ${this.stderr})`,
      },
    );
    return line;
  }

  /** Stderr parsed as JSON lines. */
  logRecords(): Record<string, unknown>[] {
    return this.stderr
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}
