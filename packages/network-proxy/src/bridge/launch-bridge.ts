import { type ChildProcess, spawn } from 'node:child_process';
import { BRIDGE_READY_LINE, type BridgeConfig } from './bridge-config.ts';

/** Bytes of the bridge's stderr kept for error messages. */
const STDERR_KEEP_BYTES = 4_096;

/**
 * Brings up `lo` in the new namespace (a fresh network namespace has it down), then execs the
 * bridge. Positional parameters: the node binary, the bridge script, the JSON config.
 */
const HOLDER_SCRIPT =
  'ip link set dev lo up 2>/dev/null || ifconfig lo up 2>/dev/null || ' +
  '{ echo "cannot bring up the loopback interface (needs ip from iproute2, or ifconfig)" >&2; exit 97; }; exec "$@"';

/** How to launch the bridge process. */
export interface LaunchBridgeOptions {
  readonly unshare: string;
  /** Also create a user namespace (mapping the current uid/gid to themselves). */
  readonly userNamespace: boolean;
  readonly nodePath: string;
  readonly script: string;
  readonly config: BridgeConfig;
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

/**
 * `unshare [--map-user=U --map-group=G --keep-caps] --net -- sh -c HOLDER node bridge.js CONFIG`;
 * resolves once the bridge listens. Rejects with an Error whose message carries the bridge's
 * stderr (or why it did not start) after killing and reaping it.
 */
export async function launchBridge(options: LaunchBridgeOptions): Promise<LaunchedBridge> {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const namespaces = options.userNamespace
    ? [`--map-user=${uid}`, `--map-group=${gid}`, '--net', '--keep-caps']
    : ['--net'];
  const argv = [...namespaces, '--', '/bin/sh', '-c', HOLDER_SCRIPT, 'sh'];
  argv.push(options.nodePath, options.script, JSON.stringify(options.config));
  const child = spawn(options.unshare, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
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
