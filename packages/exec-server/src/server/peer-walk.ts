import { ProgramWorker } from '@execd/pty-utils';
import {
  type OwnersRequest,
  type PeerWalkReply,
  type PeerWalkRequest,
  peerWalkProgram,
  type TablesRequest,
} from './peer-walk-worker.ts';

/** One slot: the highest request id whose callers all gave up (see {@link peerWalkProgram}). */
const cancel = new Int32Array(new SharedArrayBuffer(4));

/**
 * The worker's program: {@link peerWalkProgram} called with the modules it needs, loaded with
 * `process.getBuiltinModule` (Node 20.16+), so that it runs the same as a script or, when this
 * process was started with `--input-type=module` (the worker inherits it), as a module.
 */
export const PEER_WALK_WORKER_SOURCE: string = `(${peerWalkProgram.toString()})(process.getBuiltinModule('node:fs'), process.getBuiltinModule('node:worker_threads').parentPort, process.getBuiltinModule('node:worker_threads').workerData);`;

/** A worker with nothing to do ends after this long; the next connection starts one (~10 ms). */
const IDLE_MS = 30_000;

/** Small heaps: the worker holds one request's answers at a time. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 };

const walker = new ProgramWorker<PeerWalkRequest, PeerWalkReply>({
  source: PEER_WALK_WORKER_SOURCE,
  what: 'the peer-attribution worker',
  idleMs: IDLE_MS,
  resourceLimits: RESOURCE_LIMITS,
  workerData: cancel,
});
let nextId = 1;

/**
 * Runs one request in the attribution worker. Once `abandoned` resolves (every caller of the
 * request gave up) a walk still running stops. Rejects when the worker cannot run (the next
 * request starts a new one) or the request failed there.
 */
async function run(
  request: Omit<TablesRequest, 'id'> | Omit<OwnersRequest, 'id'>,
  abandoned: Promise<unknown>,
): Promise<PeerWalkReply> {
  const id = nextId++;
  let answered = false;
  void abandoned.then(() => {
    if (!answered && Atomics.load(cancel, 0) < id) Atomics.store(cancel, 0, id);
  });
  try {
    const reply = await walker.ask({ ...request, id } as PeerWalkRequest);
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply;
  } finally {
    answered = true;
  }
}

/** The inodes of the rows asked for (see `TablesRequest`), by key; keys not found are absent. */
export async function findRowsInWorker(
  request: Omit<TablesRequest, 'id' | 'op'>,
  abandoned: Promise<unknown>,
): Promise<Map<string, number>> {
  const reply = await run({ ...request, op: 'tables' }, abandoned);
  return new Map(reply.inodes ?? []);
}

/** The owners of the sockets asked for, by `socket:[N]` target; targets not found are absent. */
export async function findOwnersInWorker(
  request: Omit<OwnersRequest, 'id' | 'op'>,
  abandoned: Promise<unknown>,
): Promise<Map<string, NonNullable<PeerWalkReply['owners']>[number][1]>> {
  const reply = await run({ ...request, op: 'owners' }, abandoned);
  return new Map(reply.owners ?? []);
}

/** Ends the attribution worker now, if one runs; the next connection starts one. */
export async function endPeerWalks(): Promise<void> {
  await walker.end();
}
