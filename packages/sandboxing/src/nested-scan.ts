import { Worker } from 'node:worker_threads';
import { ExecError } from '@execd/protocol';
import {
  type NestedRootScan,
  type NestedScanClear,
  type NestedScanReply,
  type NestedScanRequest,
  nestedScanWorker,
} from './nested-scan-worker.ts';

/** What one scan found. */
export interface NestedScan {
  /** Per root, in the order asked. */
  readonly roots: readonly NestedRootScan[];
  /** Folders read (`readdir`) rather than answered from their unchanged listing. */
  readonly listed: number;
}

/**
 * The worker's program: {@link nestedScanWorker} called with the modules it needs, loaded with
 * `process.getBuiltinModule` (Node 20.16+): the code runs as a script or, when this process was
 * started with `--input-type=module` (the worker inherits it), as a module, where `require` is not
 * defined.
 */
export const WORKER_SOURCE: string = `(${nestedScanWorker.toString()})(process.getBuiltinModule('node:fs'), process.getBuiltinModule('node:path'), process.getBuiltinModule('node:worker_threads').parentPort);`;

/**
 * A worker with nothing to do ends after this long (its listings go with it: the next scan lists
 * every folder once again). A worker holds ~10 MiB; a server that runs no sandboxed command for a
 * while does not keep it.
 */
const IDLE_MS = 30_000;

/** Small heaps: the worker holds listings of at most 65,536 folders. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 4 };

interface Pending {
  resolve(reply: NestedScanReply): void;
  reject(error: Error): void;
}

/** The scan's worker thread: started at the first scan, ended when idle or when it fails. */
class ScanWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #idle: NodeJS.Timeout | undefined;
  #ended = false;
  readonly #onEnd: () => void;

  constructor(onEnd: () => void) {
    this.#onEnd = onEnd;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: RESOURCE_LIMITS,
      stdout: true,
      stderr: true,
    });
    // Never what keeps this process alive.
    this.#worker.unref();
    this.#worker.on('message', (reply: NestedScanReply) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      pending?.resolve(reply);
      this.#armIdle();
    });
    this.#worker.on('error', (error) => this.#end(error));
    this.#worker.on('exit', (code) => this.#end(new Error(`the folder-scan worker exited (code ${code})`)));
  }

  ask(message: Omit<NestedScanRequest, 'id'> | Omit<NestedScanClear, 'id'>): Promise<NestedScanReply> {
    if (this.#ended) return Promise.reject(new Error('the folder-scan worker has ended'));
    clearTimeout(this.#idle);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id });
    });
  }

  /** Ends the worker now (pending scans reject). */
  end(): Promise<void> {
    this.#end(new Error('the folder-scan worker was ended'));
    return this.#worker.terminate().then(() => undefined);
  }

  #armIdle(): void {
    if (this.#pending.size > 0) return;
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.end(), IDLE_MS);
    this.#idle.unref();
  }

  #end(error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#idle);
    this.#onEnd();
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

let current: ScanWorker | undefined;

function worker(): ScanWorker {
  if (current === undefined) {
    const started: ScanWorker = new ScanWorker(() => {
      if (current === started) current = undefined;
    });
    current = started;
  }
  return current;
}

/**
 * Lists the folders below `roots` (in order, sharing `request.dirs` visits) in the scan's worker
 * thread and returns, per root, where the watched names are. Rejects when the worker cannot run
 * (it is started afresh at the next call).
 */
export async function scanNestedNames(request: Omit<NestedScanRequest, 'id'>): Promise<NestedScan> {
  let reply: NestedScanReply;
  try {
    reply = await worker().ask(request);
  } catch (error) {
    throw new ExecError('spawnFailed', `the sandbox's folder scan could not run: ${String(error)}`, {
      cause: error,
    });
  }
  if (reply.roots === undefined)
    throw new ExecError('spawnFailed', `the sandbox's folder scan failed: ${reply.error ?? 'no answer'}`);
  return { roots: reply.roots, listed: reply.listed ?? 0 };
}

/** Ends the scan's worker now, if one runs (its listings go with it); the next scan starts one. */
export async function endFolderScan(): Promise<void> {
  await current?.end();
}

/** Forgets every folder listing the worker holds (tests). */
export async function clearFolderListings(): Promise<void> {
  await current?.ask({ clear: true });
}
