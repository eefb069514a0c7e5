import { randomUUID } from 'node:crypto';
import { type ProcessId, pathToFileUri, type SandboxParam } from '@execd/protocol';
import type { ExecBackend } from '@execd/protocol/contract';
import { type PatchFileMetadata, type PatchFileSystem, PatchFsError } from './patch-fs.ts';

/** Base64 characters per argument: under Linux's 128 KiB limit of one argv string. */
const BASE64_ARG_CHARS = 96 * 1024;

/** The error texts `sh`/coreutils print, mapped back to errno names. */
const STRERROR_CODES: ReadonlyArray<readonly [string, string]> = [
  ['No such file or directory', 'ENOENT'],
  ['Permission denied', 'EACCES'],
  ['Read-only file system', 'EROFS'],
  ['Is a directory', 'EISDIR'],
  ['Not a directory', 'ENOTDIR'],
  ['Operation not permitted', 'EPERM'],
  ['No space left on device', 'ENOSPC'],
  ['File exists', 'EEXIST'],
];

interface RunResult {
  readonly exitCode: number;
  readonly stdout: Uint8Array;
  readonly stderr: string;
}

/**
 * Files on an executor reached through its backend, one small `/bin/sh` process per operation
 * (`cat`, `base64 -d`, `rm`, `mkdir -p`). Writes run under `sandbox`, so they are confined the way
 * the environment's commands are; reads run unsandboxed (as the original reads patch targets).
 *
 * HACK: a stand-in for the executor's `fs/*` methods; a written file must fit in the argv
 * (about 1.5 MB).
 */
export class BackendPatchFileSystem implements PatchFileSystem {
  readonly #backend: ExecBackend;
  readonly #cwd: string;
  readonly #sandbox: SandboxParam | undefined;

  /** `sandbox` in the executor's form (the original's for an original peer). */
  constructor(backend: ExecBackend, cwd: string, sandbox: SandboxParam | undefined) {
    this.#backend = backend;
    this.#cwd = cwd;
    this.#sandbox = sandbox;
  }

  async readFile(path: string): Promise<Uint8Array> {
    const result = await this.#run('cat -- "$1"', [path], false);
    if (result.exitCode !== 0) throw errorFrom(result);
    return result.stdout;
  }

  async writeFile(path: string, data: Uint8Array): Promise<void> {
    const encoded = Buffer.from(data).toString('base64');
    const parts: string[] = [];
    for (let at = 0; at < encoded.length; at += BASE64_ARG_CHARS) {
      parts.push(encoded.slice(at, at + BASE64_ARG_CHARS));
    }
    const script = 'target=$1; shift; printf %s "$@" | base64 -d > "$target"';
    const result = await this.#run(script, [path, ...parts], true);
    if (result.exitCode !== 0) throw errorFrom(result);
  }

  async remove(path: string): Promise<void> {
    const result = await this.#run('rm -- "$1"', [path], true);
    if (result.exitCode !== 0) throw errorFrom(result);
  }

  async createDirectory(path: string, options: { readonly recursive: boolean }): Promise<void> {
    const result = await this.#run(options.recursive ? 'mkdir -p -- "$1"' : 'mkdir -- "$1"', [path], true);
    if (result.exitCode !== 0) throw errorFrom(result);
  }

  async getMetadata(path: string): Promise<PatchFileMetadata> {
    const script =
      'if [ -d "$1" ]; then echo d; elif [ -f "$1" ]; then echo f; elif [ -e "$1" ]; then echo o; else echo n; fi';
    const result = await this.#run(script, [path], false);
    const kind = Buffer.from(result.stdout).toString('utf8').trim();
    if (result.exitCode !== 0) throw errorFrom(result);
    if (kind === 'n') throw new PatchFsError('ENOENT');
    return { isFile: kind === 'f', isDirectory: kind === 'd' };
  }

  async #run(script: string, args: readonly string[], sandboxed: boolean): Promise<RunResult> {
    const process = await this.#backend.start({
      processId: `apply-patch-${randomUUID()}` as ProcessId,
      argv: ['/bin/sh', '-c', script, 'sh', ...args],
      cwd: pathToFileUri(this.#cwd),
      envPolicy: undefined,
      shellSnapshot: undefined,
      env: { LC_ALL: 'C' },
      tty: false,
      pipeStdin: false,
      arg0: undefined,
      sandbox: sandboxed ? this.#sandbox : undefined,
      enforceManagedNetwork: false,
      managedNetwork: undefined,
      networkProxy: undefined,
    });
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    let exitCode = -1;
    try {
      for await (const event of process.events()) {
        if (event.type === 'output') (event.stream === 'stderr' ? stderr : stdout).push(event.chunk);
        else if (event.type === 'exited') exitCode = event.exitCode;
        else if (event.type === 'failed') throw new PatchFsError('EOTHER', event.message);
      }
    } finally {
      await process.close();
    }
    return { exitCode, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8') };
  }
}

function errorFrom(result: RunResult): PatchFsError {
  for (const [text, code] of STRERROR_CODES) {
    if (result.stderr.includes(text)) return new PatchFsError(code);
  }
  return new PatchFsError('EOTHER', result.stderr.trim() || `exit code ${result.exitCode}`);
}
