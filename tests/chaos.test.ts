// Chaos: a fault-injecting proxy between the clients and the execd-server CLI drops, cuts, stalls,
// delays and refuses connections at random moments while processes stream output and take stdin
// writes. Every process's output must arrive byte-exact (sha256 against what the process itself
// hashed), and every write must be applied exactly once, in order, for both codecs.
// `npm test`: 10 processes; `pnpm test:stress`: 100.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecServerClient } from '@execd/exec-client';
import { ExecError } from '@execd/protocol';
import { FaultProxy } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { type Collected, childEnv, collect, execParams, isContiguousFromOne } from './helpers/exec.ts';
import { Rng } from './helpers/rng.ts';
import { stressSize } from './helpers/stress.ts';

const PROCESSES = stressSize(10, 100);
const CLIENTS = stressSize(2, 10);
const OUTPUT_BYTES = stressSize(192 * 1024, 384 * 1024);
const CHUNK_BYTES = 4096;
/** Between chunks: spreads each process's output over a few seconds, so faults land mid-stream. */
const CHUNK_INTERVAL_MS = 30;
const WRITES = 20;
/** A start cut off by a fault is started again (under a new id) at most this many times. */
const MAX_START_ATTEMPTS = 10;
let startRetries = 0;
const SEED = Number(process.env.EXECD_CHAOS_SEED ?? Date.now() % 2 ** 31);
const FIXTURE = join(import.meta.dirname, 'fixtures', 'stream-writer.mjs');

let server: CliServer;
let proxy: FaultProxy;
const clients: ExecServerClient[] = [];

beforeAll(async () => {
  server = await CliServer.start({ args: ['--log-level', 'warn'] });
  proxy = await FaultProxy.start({ target: server.url });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await proxy?.close();
  await server?.kill('SIGTERM');
});

interface Outcome {
  readonly processId: string;
  readonly codec: string;
  readonly result: Collected;
}

/** Runs one process: streams its output while writing `w0..w19` then `END` to its stdin. */
async function runOne(client: ExecServerClient, codec: string, name: string, rng: Rng): Promise<Outcome> {
  // A start cut off by a lost connection is not retried by the client (documented: it rejects
  // with a TransportClosedError and terminates that id once the session is resumed), so the
  // caller starts again under a new id, as an application would.
  let proc: Awaited<ReturnType<ExecServerClient['start']>> | undefined;
  let processId = name;
  for (let attempt = 1; proc === undefined; attempt++) {
    try {
      proc = await client.start(
        execParams({
          processId,
          argv: [
            process.execPath,
            FIXTURE,
            String(OUTPUT_BYTES),
            String(CHUNK_BYTES),
            String(CHUNK_INTERVAL_MS),
          ],
          env: childEnv(),
          pipeStdin: true,
        }),
      );
    } catch (error) {
      if (!ExecError.is(error) || error.code !== 'transportClosed' || attempt >= MAX_START_ATTEMPTS) {
        throw new Error(`${processId}: start failed (attempt ${attempt})`, { cause: error });
      }
      startRetries += 1;
      processId = `${name}-retry${attempt}`;
    }
  }
  const following = collect(proc).catch((error) => {
    throw new Error(`${processId}: following the events failed`, { cause: error });
  });
  const encoder = new TextEncoder();
  const write = async (line: string): Promise<void> => {
    let status: string;
    try {
      status = (await proc.write(encoder.encode(line))).status;
    } catch (error) {
      throw new Error(`${processId}: write ${JSON.stringify(line)} failed`, { cause: error });
    }
    expect(status, `${processId}: write ${JSON.stringify(line)}`).toBe('accepted');
  };
  for (let i = 0; i < WRITES; i++) {
    await sleep(20 + rng.int(80));
    await write(`w${i}\n`);
  }
  await write('END\n');
  return { processId, codec, result: await following };
}

/**
 * Random faults until `stop` is aborted; returns how many of each it injected. The first one
 * drops every connection, so each run resumes sessions at least once however few faults fit in
 * it (a fast machine streams the processes in under 3 s: a few stalls and delays only, no
 * reconnect, was a possible draw).
 */
async function injectFaults(rng: Rng, stop: AbortSignal): Promise<Record<string, number>> {
  const injected: Record<string, number> = {};
  let first = true;
  const count = (name: string): void => {
    injected[name] = (injected[name] ?? 0) + 1;
  };
  const pause = (ms: number): Promise<void> => sleep(ms, undefined, { signal: stop }).catch(() => {});
  while (!stop.aborted) {
    await pause(150 + rng.int(350));
    if (stop.aborted) break;
    const direction = rng.chance(0.5) ? 'toClient' : 'toServer';
    const kind = rng.int(5);
    switch (first ? 0 : kind) {
      case 0:
        proxy.drop();
        count('drop');
        break;
      case 1:
        // Resolves once a frame was cut; traffic flows both ways all the time, so it happens soon.
        void proxy.cutMidFrame(direction);
        count(`cut-${direction}`);
        break;
      case 2:
        proxy.pause(direction);
        await pause(100 + rng.int(400));
        proxy.resume(direction);
        count(`stall-${direction}`);
        break;
      case 3:
        proxy.setDelay(5 + rng.int(40), direction);
        await pause(200 + rng.int(400));
        proxy.setDelay(0, direction);
        count(`delay-${direction}`);
        break;
      default:
        proxy.refuseConnections(100 + rng.int(500));
        proxy.drop();
        count('drop+refuse');
    }
    first = false;
  }
  proxy.resume('both');
  proxy.setDelay(0, 'both');
  proxy.acceptConnections();
  return injected;
}

describe(`chaos: ${PROCESSES} processes over ${CLIENTS} clients, both codecs (seed ${SEED})`, () => {
  test('every output is byte-exact and every write is applied exactly once', async () => {
    const rng = new Rng(SEED);
    for (let i = 0; i < CLIENTS; i++) {
      const codec = i % 2 === 0 ? 'msgpack' : 'json';
      clients.push(
        await ExecServerClient.connect({ url: proxy.url, codec, clientName: `chaos-${i}` }).catch((error) => {
          throw new Error(`client ${i}: connect failed`, { cause: error });
        }),
      );
    }
    const stop = new AbortController();
    const faults = injectFaults(new Rng(SEED + 1), stop.signal);
    let outcomes: Outcome[];
    try {
      outcomes = await Promise.all(
        Array.from({ length: PROCESSES }, (_, index) => {
          const clientIndex = index % CLIENTS;
          const codec = clientIndex % 2 === 0 ? 'msgpack' : 'json';
          return runOne(clients[clientIndex]!, codec, `chaos-${index}`, new Rng(rng.int(2 ** 31)));
        }),
      );
    } finally {
      stop.abort();
    }
    const injected = await faults;

    const expectedWrites = Array.from({ length: WRITES }, (_, i) => `got w${i}`);
    for (const { processId, codec, result } of outcomes) {
      const where = `${processId} (${codec})`;
      expect(result.failure, where).toBeUndefined();
      expect(result.closed, where).toBe(true);
      expect(result.exitCode, where).toBe(0);
      expect(isContiguousFromOne(result.seqs), `${where}: seqs without holes or repeats`).toBe(true);
      const stderr = result.stderr.toString().trimEnd().split('\n');
      const hashLine = stderr.pop() ?? '';
      // Each write applied exactly once, in order: no duplicate from a retry, none lost.
      expect(stderr, where).toEqual(expectedWrites);
      const [, sha, bytes] = hashLine.split(' ');
      expect(Number(bytes), where).toBe(OUTPUT_BYTES);
      expect(result.stdout.length, where).toBe(OUTPUT_BYTES);
      expect(createHash('sha256').update(result.stdout).digest('hex'), where).toBe(sha);
    }
    const total = Object.values(injected).reduce((sum, n) => sum + n, 0);
    console.log(
      `chaos seed ${SEED}: ${outcomes.length} processes (${startRetries} starts retried), ${total} faults ${JSON.stringify(injected)}, proxy ${JSON.stringify(proxy.stats)}`,
    );
    expect(total).toBeGreaterThan(0);
    expect(proxy.stats.accepted).toBeGreaterThan(CLIENTS);
  });
});
