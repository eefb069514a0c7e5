// Load: many concurrent clients, each streaming several processes at once, against the
// execd-server CLI. Nothing may be lost and every client must be served; the aggregate throughput
// is printed (bench/exec-server.bench.mjs measures it as a figure). `npm test`: 20 clients;
// `pnpm test:stress`: 200 clients, 5 processes each.
import { ExecServerClient } from '@execd/exec-client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { collect, execParams, isContiguousFromOne } from './helpers/exec.ts';
import { stressSize } from './helpers/stress.ts';

const CLIENTS = stressSize(20, 200);
const PROCESSES_PER_CLIENT = 5;
/** Each process prints the numbers 1..LINES (`seq`): 288,894 bytes, checkable line by line. */
const LINES = 50_000;
const EXPECTED = `${Array.from({ length: LINES }, (_, i) => i + 1).join('\n')}\n`;

let server: CliServer;
const clients: ExecServerClient[] = [];

beforeAll(async () => {
  server = await CliServer.start({ args: ['--log-level', 'warn'] });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await server?.kill('SIGTERM');
});

describe(`load: ${CLIENTS} clients x ${PROCESSES_PER_CLIENT} streaming processes`, () => {
  test('every client is served and nothing is lost', async () => {
    const connected = await Promise.all(
      Array.from({ length: CLIENTS }, (_, index) =>
        ExecServerClient.connect({
          url: server.url,
          codec: index % 2 === 0 ? 'msgpack' : 'json',
          clientName: `load-${index}`,
        }),
      ),
    );
    clients.push(...connected);
    const started = performance.now();
    const perClient = await Promise.all(
      connected.map(async (client, clientIndex) => {
        const runs = await Promise.all(
          Array.from({ length: PROCESSES_PER_CLIENT }, async (_, index) => {
            const proc = await client.start(
              execParams({ processId: `load-${clientIndex}-${index}`, argv: ['seq', '1', String(LINES)] }),
            );
            return collect(proc);
          }),
        );
        return { clientIndex, runs };
      }),
    );
    const elapsedMs = performance.now() - started;

    let bytes = 0;
    for (const { clientIndex, runs } of perClient) {
      expect(runs).toHaveLength(PROCESSES_PER_CLIENT);
      for (const [index, run] of runs.entries()) {
        const where = `client ${clientIndex} process ${index}`;
        expect(run.failure, where).toBeUndefined();
        expect(run.exitCode, where).toBe(0);
        expect(isContiguousFromOne(run.seqs), where).toBe(true);
        // Compare lengths first: a diff of two 288 KB strings is unreadable.
        expect(run.stdout.length, where).toBe(EXPECTED.length);
        expect(run.stdout.toString() === EXPECTED, where).toBe(true);
        bytes += run.stdout.length;
      }
    }
    const processes = CLIENTS * PROCESSES_PER_CLIENT;
    console.log(
      `load: ${CLIENTS} clients, ${processes} processes, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${(elapsedMs / 1000).toFixed(2)} s: ` +
        `${(bytes / 2 ** 20 / (elapsedMs / 1000)).toFixed(1)} MiB/s, ${(processes / (elapsedMs / 1000)).toFixed(1)} processes/s`,
    );
    expect(bytes).toBe(processes * EXPECTED.length);
  });
});
