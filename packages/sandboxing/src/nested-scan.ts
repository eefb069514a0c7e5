import { ExecError } from '@execd/protocol';
import { ProgramWorker } from '@execd/pty-utils';
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

const scanWorker = new ProgramWorker<NestedScanRequest | NestedScanClear, NestedScanReply>({
  source: WORKER_SOURCE,
  what: 'the folder-scan worker',
  idleMs: IDLE_MS,
  resourceLimits: RESOURCE_LIMITS,
});
let nextId = 1;

/**
 * Lists the folders below `roots` (in order, sharing `request.dirs` visits) in the scan's worker
 * thread and returns, per root, where the watched names are. Rejects when the worker cannot run
 * (it is started afresh at the next call).
 */
export async function scanNestedNames(request: Omit<NestedScanRequest, 'id'>): Promise<NestedScan> {
  let reply: NestedScanReply;
  try {
    reply = await scanWorker.ask({ ...request, id: nextId++ });
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
  await scanWorker.end();
}

/** Forgets every folder listing the worker holds (tests). */
export async function clearFolderListings(): Promise<void> {
  if (scanWorker.running) await scanWorker.ask({ clear: true, id: nextId++ });
}
