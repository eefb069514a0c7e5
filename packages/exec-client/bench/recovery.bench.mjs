#!/usr/bin/env node
// Session recovery after a cut connection: 10 processes each emit 1 MiB; the connection is dropped
// (TCP RST, through the fault proxy) after some output arrived and stays refused until every
// process has finished writing; then reconnects are accepted. Measures the time from accepting
// reconnects to every byte delivered (all processes closed), and the bytes that recovery brought
// back; checks that every process's output arrived byte-exact, in order, exactly once.
// Median of RUNS runs. Usage: node bench/recovery.bench.mjs  (needs `pnpm build` first).
// The fault proxy is TypeScript source in the private test kit; vite's module runner loads it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { startExecServer } from '@execd/exec-server/server';
import { runnerImport } from 'vite';
import { ExecServerClient } from '../dist/index.js';

const { FaultProxy } = (
  await runnerImport('@execd/test-kit/fault-proxy', { configFile: false, logLevel: 'silent' })
).module;

/** 20 runs give a stable median; one run takes well under a second. */
const RUNS = Number(process.env.RECOVERY_RUNS ?? 20);
const PROCESSES = 10;
/** 1 MiB per process: exactly the server's retention, so nothing may be evicted. */
const BYTES_PER_PROCESS = 1024 * 1024;
/** Each line is 8 bytes ("%07d\n"), so the output is deterministic and order-checkable. */
const LINES = BYTES_PER_PROCESS / 8;
/** Cut once this much output has arrived in total (some before, most after the cut). */
const CUT_AFTER_BYTES = 2 * 1024 * 1024;
const DEADLINE_MS = 60_000;

const expected = Buffer.from(
  Array.from({ length: LINES }, (_, i) => `${String(i).padStart(7, '0')}\n`).join(''),
);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function until(predicate, what) {
  const deadline = performance.now() + DEADLINE_MS;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(2);
  }
}

async function run(server, scratch, index) {
  const proxy = await FaultProxy.start({ target: server.url });
  const client = await ExecServerClient.connect({
    url: proxy.url,
    recoveryTimeoutMs: DEADLINE_MS,
    recoveryInitialDelayMs: 1,
    recoveryMaxDelayMs: 5,
  });
  try {
    return await measure(client, proxy, scratch, index);
  } finally {
    await client.close();
    await proxy.close();
  }
}

async function measure(client, proxy, scratch, index) {
  const go = join(scratch, `go-${index}`);
  const script =
    'while [ ! -e "$1" ]; do sleep 0.005; done; ' +
    `awk 'BEGIN { for (i = 0; i < ${LINES}; i++) printf "%07d\\n", i }'; : > "$2"`;
  const cwd = pathToFileURL(tmpdir()).href;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const state = [];
  let cut = false;
  for (let p = 0; p < PROCESSES; p++) {
    const done = join(scratch, `done-${index}-${p}`);
    const proc = await client.start({
      processId: `emit-${p}`,
      argv: ['sh', '-c', script, 'sh', go, done],
      cwd,
      env,
      tty: false,
    });
    const entry = { proc, done, chunks: [], bytes: 0, afterCut: 0, closed: false, lastSeq: 0, ordered: true };
    entry.follow = (async () => {
      for await (const event of proc.events()) {
        if (event.type === 'failed') throw new Error(`process failed: ${event.message}`);
        if (event.seq !== entry.lastSeq + 1) entry.ordered = false;
        entry.lastSeq = event.seq;
        if (event.type === 'output') {
          entry.chunks.push(event.chunk);
          entry.bytes += event.chunk.byteLength;
          if (cut) entry.afterCut += event.chunk.byteLength;
        }
        if (event.type === 'closed') {
          entry.closed = true;
          return;
        }
      }
    })();
    state.push(entry);
  }
  const total = () => state.reduce((sum, e) => sum + e.bytes, 0);
  await writeFile(go, '');
  await until(() => total() >= CUT_AFTER_BYTES, 'output before the cut');
  proxy.refuseConnections();
  proxy.drop();
  cut = true;
  await until(
    () => state.every((e) => existsSync(e.done)),
    'every process to finish writing while disconnected',
  );
  const reconnectAllowedAt = performance.now();
  proxy.acceptConnections();
  await Promise.all(state.map((e) => e.follow));
  const recoveredMs = performance.now() - reconnectAllowedAt;
  for (const [p, e] of state.entries()) {
    const got = Buffer.concat(e.chunks);
    if (!e.ordered || !got.equals(expected)) {
      throw new Error(
        `run ${index} process ${p}: output differs (${got.length} of ${expected.length} bytes, ordered=${e.ordered})`,
      );
    }
  }
  return {
    recoveredMs,
    recoveredBytes: state.reduce((sum, e) => sum + e.afterCut, 0),
    deliveredBytes: total(),
  };
}

const scratch = await mkdtemp(join(tmpdir(), 'execd-recovery-bench-'));
const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
const results = [];
try {
  for (let i = 0; i < RUNS; i++) results.push(await run(server, scratch, i));
} finally {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
}

const emitted = PROCESSES * BYTES_PER_PROCESS;
const exact = results.every((r) => r.deliveredBytes === emitted);
console.log(`runs: ${RUNS}, ${PROCESSES} processes x ${BYTES_PER_PROCESS} bytes each`);
console.log(
  `reconnect -> fully recovered: median ${median(results.map((r) => r.recoveredMs)).toFixed(1)} ms`,
);
console.log(`bytes recovered after the cut: median ${median(results.map((r) => r.recoveredBytes))}`);
console.log(`bytes delivered = bytes emitted in every run: ${exact}`);
if (!exact) process.exitCode = 1;

const figure = (name, execd, unit) => ({
  figure: name,
  execd,
  baseline: null,
  unit,
  ratio: null,
  baselineName: null,
});
process.stdout.write(
  `${JSON.stringify({
    name: 'exec-server-recovery',
    figures: [
      figure(
        'reconnect to fully recovered, 10 processes x 1 MiB (median)',
        median(results.map((r) => r.recoveredMs)),
        'ms',
      ),
      figure('bytes recovered after the cut (median)', median(results.map((r) => r.recoveredBytes)), 'bytes'),
      figure(
        'bytes delivered / bytes emitted (every run)',
        Math.min(...results.map((r) => r.deliveredBytes / emitted)),
        'ratio',
      ),
    ],
  })}\n`,
);
