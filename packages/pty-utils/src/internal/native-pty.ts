import { createRequire } from 'node:module';

/** What node-pty's native `fork` returns: the master fd, the child's pid and the slave's path. */
export interface NativeForkResult {
  readonly fd: number;
  readonly pid: number;
  readonly pty: string;
}

/** The subset of node-pty's native binding (`pty.node`, @lydell/node-pty 1.1) this package drives. */
export interface NativePty {
  fork(
    file: string,
    args: readonly string[],
    env: readonly string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): NativeForkResult;
  resize(fd: number, cols: number, rows: number): void;
  /** A new terminal of this size: the master and slave fds (neither close-on-exec) and the slave's path. */
  open(cols: number, rows: number): { readonly master: number; readonly slave: number; readonly pty: string };
}

/** The loaded binding plus the spawn-helper path macOS needs (unused on Linux). */
export interface NativePtyBinding {
  readonly native: NativePty;
  readonly helperPath: string;
}

let binding: NativePtyBinding | undefined;

/**
 * Loads node-pty's native binding (once, on first PTY spawn).
 *
 * HACK: node-pty's public `spawn()` wraps this binding in a `UnixTerminal` that (a) adds `PWD` and
 * `TERM` to the child's environment and (b) destroys the master socket 200 ms after the child exits
 * (`DESTROY_SOCKET_TIMEOUT_MS`), dropping any output not yet read, which loses trailing output on a
 * fast exit or while output is paused for backpressure (microsoft/node-pty#72, microsoft/node-pty#726). Driving the
 * binding directly lets us pass the caller's env untouched and read the master until EIO.
 * The binding's signature is pinned by the catalog version of @lydell/node-pty.
 */
export function loadNativePty(): NativePtyBinding {
  if (binding !== undefined) return binding;
  const fromHere = createRequire(import.meta.url);
  const fromPty = createRequire(fromHere.resolve('@lydell/node-pty'));
  const { requireBinary } = fromPty('./requireBinary.js') as { requireBinary: (file: string) => unknown };
  const native = requireBinary('pty.node') as NativePty;
  if (typeof native.fork !== 'function' || typeof native.resize !== 'function') {
    throw new Error('@lydell/node-pty: unexpected native binding shape (fork/resize missing)');
  }
  const helperPath =
    process.platform === 'darwin'
      ? fromPty
          .resolve(`@lydell/node-pty-${process.platform}-${process.arch}/spawn-helper`)
          .replace('app.asar', 'app.asar.unpacked')
      : 'spawn-helper-unused';
  binding = { native, helperPath };
  return binding;
}
