import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { TRUSTED_PATH } from '@execd/pty-utils';
import { BRIDGE_DIR_FD, BRIDGE_READY_LINE, type BridgeConfig } from './bridge-config.ts';

/** Bytes of the bridge's stderr kept for error messages. */
const STDERR_KEEP_BYTES = 4_096;

/**
 * Brings up `lo` in the new namespace (a fresh network namespace has it down) with the `ip` or
 * `ifconfig` given by absolute path (an empty argument: not installed), then execs the bridge.
 * Positional parameters: ip, ifconfig, the node binary, the bridge script, the JSON config.
 */
const HOLDER_SCRIPT =
  'ip=$1 ifc=$2; shift 2; ' +
  '{ [ -n "$ip" ] && "$ip" link set dev lo up 2>/dev/null; } || ' +
  '{ [ -n "$ifc" ] && "$ifc" lo up 2>/dev/null; } || ' +
  '{ echo "cannot bring up the loopback interface (needs ip from iproute2, or ifconfig)" >&2; exit 97; }; exec "$@"';

/** Absolute paths of the programs the launch runs (see `trustedExecutable`). */
export interface BridgeHelpers {
  readonly unshare: string;
  readonly sh: string;
  /** `ip` (iproute2), if installed in a trusted folder. */
  readonly ip: string | undefined;
  /** `ifconfig` (net-tools), if installed in a trusted folder. */
  readonly ifconfig: string | undefined;
}

/** How to launch the bridge process. */
export interface LaunchBridgeOptions {
  readonly helpers: BridgeHelpers;
  /** Also create a user namespace (mapping the current uid/gid to themselves). */
  readonly userNamespace: boolean;
  readonly nodePath: string;
  readonly script: string;
  readonly config: BridgeConfig;
  /** The proxy's socket folder, handed to the bridge as an open fd (`BRIDGE_DIR_FD`). */
  readonly socketDir: string;
  /** The proxy's greeting secret, written as the first line of the bridge's stdin. */
  readonly secret: Buffer;
  readonly startTimeoutMs: number;
}

/** A bridge process that printed its ready line. */
export interface LaunchedBridge {
  readonly child: ChildProcess;
  /** Resolves once the process exited and its pipes closed. */
  readonly exited: Promise<void>;
  /** The last bytes it wrote to stderr. */
  stderr(): string;
}

/** Spawns `unshare` with `dirFd` as the child's fd 3 and a fixed environment. */
function spawnUnshare(unshare: string, argv: readonly string[], dirFd: number): ChildProcess {
  const stdio: ('pipe' | number)[] = ['pipe', 'pipe', 'pipe'];
  while (stdio.length < BRIDGE_DIR_FD) stdio.push('pipe');
  stdio[BRIDGE_DIR_FD] = dirFd;
  // Nothing of the executor's environment (PATH, NODE_OPTIONS, ...) steers the bridge.
  return spawn(unshare, [...argv], { stdio, env: { PATH: TRUSTED_PATH } });
}

/**
 * `unshare [--map-user=U --map-group=G --keep-caps] --net -- sh -c HOLDER sh IP IFCONFIG node
 * bridge.js CONFIG`, every program by absolute path from trusted folders; the secret goes on stdin
 * (never argv or the environment) and the socket folder as fd 3. Resolves once the bridge listens.
 * Rejects with an Error whose message carries the bridge's stderr (or why it did not start) after
 * killing and reaping it.
 */
export async function launchBridge(options: LaunchBridgeOptions): Promise<LaunchedBridge> {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const namespaces = options.userNamespace
    ? [`--map-user=${uid}`, `--map-group=${gid}`, '--net', '--keep-caps']
    : ['--net'];
  const { helpers } = options;
  const argv = [...namespaces, '--', helpers.sh, '-c', HOLDER_SCRIPT, 'sh'];
  argv.push(helpers.ip ?? '', helpers.ifconfig ?? '');
  argv.push(options.nodePath, options.script, JSON.stringify(options.config));
  const dir = await open(options.socketDir, constants.O_RDONLY | constants.O_DIRECTORY);
  let child: ChildProcess;
  try {
    child = spawnUnshare(helpers.unshare, argv, dir.fd);
  } finally {
    // The child has its own copy. Not awaited: no await may come before the listeners below are
    // attached, or a bridge that fails at once (no namespaces allowed) could close unseen.
    void dir.close().catch(() => {});
  }
  // 'close', not 'exit': the stdio pipes are closed too, so nothing of the bridge stays open.
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve(); // never started: no 'close' follows
    });
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_KEEP_BYTES);
  });
  child.stdin?.on('error', () => {});
  child.stdin?.write(`${options.secret.toString('hex')}\n`);
  try {
    await waitReady(child, options.startTimeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(stderr.trim() || (error as Error).message, { cause: error });
  }
  return { child, exited, stderr: () => stderr };
}

function waitReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('close', onClose);
      child.off('error', onError);
    };
    const onData = (text: string): void => {
      stdout += text;
      if (!stdout.includes(`${BRIDGE_READY_LINE}\n`)) return;
      cleanup();
      // Nothing else comes on stdout; keep draining it so the pipe never fills.
      child.stdout?.resume();
      resolve();
    };
    const onClose = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(new Error(`exited with ${signal ?? `code ${code}`}`));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', onData);
    // 'close' (after stdio drained) so stderr has arrived when the error is reported.
    child.once('close', onClose);
    child.once('error', onError);
  });
}
