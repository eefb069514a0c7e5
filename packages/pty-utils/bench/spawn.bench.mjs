#!/usr/bin/env node
// Benchmarks @execd/pty-utils against the raw libraries it wraps:
//   1. spawn-to-exit of `echo hi` (median of SPAWN_RUNS) via spawnPipe/spawnPty vs raw
//      child_process.spawn and raw node-pty;
//      and the same through a fork server (`ForkServer`, the Python helper where there is one);
//   2. throughput of 256 MiB of output (`head -c 268435456 /dev/zero`), median of THROUGHPUT_RUNS.
// Variants run interleaved (one of each per round) so a busy machine skews them alike.
// Prints a small table, then one JSON line with every figure (collected by the root bench runner).
// Usage: node bench/spawn.bench.mjs   (needs `pnpm build` first: it imports ../dist/index.js)
import { spawn as rawSpawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { ForkServer, spawnPipe, spawnPty } from '../dist/index.js';

const require = createRequire(import.meta.url);
const nodePty = require('@lydell/node-pty');

/** Enough runs for a stable median of a ~5 ms operation while keeping the whole bench short. */
const SPAWN_RUNS = Number(process.env.SPAWN_RUNS ?? 40);
/** Each throughput run moves 256 MiB (a PTY manages tens of MB/s): one run each keeps the bench well under a minute. */
const THROUGHPUT_RUNS = Number(process.env.THROUGHPUT_RUNS ?? 1);
const THROUGHPUT_BYTES = 256 * 1024 * 1024;
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = process.cwd();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Runs every variant once per round, round after round, so that load from elsewhere on the machine
 * hits all of them alike; returns each variant's samples ({ms, bytes}).
 */
async function interleaved(rounds, variants) {
  const samples = Object.fromEntries(variants.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of variants) {
      const start = performance.now();
      const bytes = await fn();
      samples[name].push({ ms: performance.now() - start, bytes });
    }
  }
  return samples;
}

/** Raw child_process: resolves with the stdout byte count once the child exited and its pipes closed. */
function rawPipeRun(argv) {
  return new Promise((resolve, reject) => {
    const child = rawSpawn(argv[0], argv.slice(1), {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let bytes = 0;
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
    });
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve(bytes));
  });
}

/** Raw node-pty: resolves with the byte count at onExit (node-pty's own notion of done). */
function rawPtyRun(argv) {
  return new Promise((resolve) => {
    const term = nodePty.spawn(argv[0], argv.slice(1), { cwd, env, cols: 80, rows: 24, encoding: null });
    let bytes = 0;
    term.onData((chunk) => {
      bytes += chunk.length;
    });
    term.onExit(() => resolve(bytes));
  });
}

/** Started once; undefined where no helper can run (its rows are then left out). */
const forkServer = await ForkServer.start();

async function oursRun(spawnFn, argv, viaForkServer = false) {
  // Plain Node 20 has no `await using`; close() explicitly.
  const proc = await spawnFn({ argv, cwd, env, forkServer: viaForkServer ? forkServer : undefined });
  try {
    let bytes = 0;
    for await (const chunk of proc.output()) bytes += chunk.bytes.length;
    await proc.closed;
    return bytes;
  } finally {
    await proc.close();
  }
}

const echo = ['echo', 'hi'];
const flood = ['head', '-c', String(THROUGHPUT_BYTES), '/dev/zero'];

const spawnVariants = [
  ['rawChildProcess', () => rawPipeRun(echo)],
  ['spawnPipe', () => oursRun(spawnPipe, echo)],
  ['rawNodePty', () => rawPtyRun(echo)],
  ['spawnPty', () => oursRun(spawnPty, echo)],
  ...(forkServer === undefined
    ? []
    : [
        ['spawnPipeForked', () => oursRun(spawnPipe, echo, true)],
        ...(forkServer.helper === 'python' ? [['spawnPtyForked', () => oursRun(spawnPty, echo, true)]] : []),
      ]),
];
await interleaved(1, spawnVariants); // warm-up: module loading, first fork
const spawnSamples = await interleaved(SPAWN_RUNS, spawnVariants);
const spawnMs = Object.fromEntries(
  Object.entries(spawnSamples).map(([name, runs]) => [name, median(runs.map((s) => s.ms))]),
);

const throughputSamples = await interleaved(THROUGHPUT_RUNS, [
  ['rawChildProcess', () => rawPipeRun(flood)],
  ['spawnPipe', () => oursRun(spawnPipe, flood)],
  ['rawNodePty', () => rawPtyRun(flood)],
  ['spawnPty', () => oursRun(spawnPty, flood)],
]);
const throughputMBps = {};
const bytesSeen = {};
for (const [name, runs] of Object.entries(throughputSamples)) {
  throughputMBps[name] = median(runs.map((s) => s.bytes / 1e6 / (s.ms / 1000)));
  bytesSeen[name] = Math.min(...runs.map((s) => s.bytes));
}

const ratios = {
  spawnPipeVsRaw: spawnMs.spawnPipe / spawnMs.rawChildProcess,
  spawnPtyVsRaw: spawnMs.spawnPty / spawnMs.rawNodePty,
  throughputPipeVsRaw: throughputMBps.spawnPipe / throughputMBps.rawChildProcess,
  throughputPtyVsRaw: throughputMBps.spawnPty / throughputMBps.rawNodePty,
};

const fmt = (n, digits = 2) => n.toFixed(digits).padStart(9);
const out = process.stdout;
out.write(`spawn-to-exit of \`echo hi\` (median of ${SPAWN_RUNS}, ms)\n`);
out.write(
  `  pipes: raw child_process ${fmt(spawnMs.rawChildProcess)}  spawnPipe ${fmt(spawnMs.spawnPipe)}  ratio ${fmt(ratios.spawnPipeVsRaw)}\n`,
);
out.write(
  `  pty:   raw node-pty      ${fmt(spawnMs.rawNodePty)}  spawnPty  ${fmt(spawnMs.spawnPty)}  ratio ${fmt(ratios.spawnPtyVsRaw)}\n`,
);
if (spawnMs.spawnPipeForked !== undefined) {
  out.write(
    `  by the ${forkServer.helper} fork server: pipes ${fmt(spawnMs.spawnPipeForked)}${spawnMs.spawnPtyForked === undefined ? '' : `  pty ${fmt(spawnMs.spawnPtyForked)}`}\n`,
  );
}
out.write(`throughput of 256 MiB (median of ${THROUGHPUT_RUNS}, MB/s)\n`);
out.write(
  `  pipes: raw child_process ${fmt(throughputMBps.rawChildProcess, 0)}  spawnPipe ${fmt(throughputMBps.spawnPipe, 0)}  ratio ${fmt(ratios.throughputPipeVsRaw)}\n`,
);
out.write(
  `  pty:   raw node-pty      ${fmt(throughputMBps.rawNodePty, 0)}  spawnPty  ${fmt(throughputMBps.spawnPty, 0)}  ratio ${fmt(ratios.throughputPtyVsRaw)}\n`,
);
if (bytesSeen.rawNodePty < THROUGHPUT_BYTES) {
  out.write(
    `  (raw node-pty delivered only ${bytesSeen.rawNodePty} of ${THROUGHPUT_BYTES} bytes by onExit in its worst run)\n`,
  );
}
const figure = (name, execd, baseline, baselineName, unit) => ({
  figure: name,
  execd,
  baseline,
  baselineName,
  unit,
  ratio: baseline ? execd / baseline : null,
});
/** The fork server's rows, against the same raw baselines (only those it could measure). */
const forkedFigures = [
  ['pipes', spawnMs.spawnPipeForked, spawnMs.rawChildProcess, 'raw child_process.spawn'],
  ['PTY', spawnMs.spawnPtyForked, spawnMs.rawNodePty, 'raw node-pty'],
]
  .filter(([, ms]) => ms !== undefined)
  .map(([io, ms, baseline, baselineName]) =>
    figure(
      `spawn+exit of echo hi, ${io}, by the ${forkServer.helper} fork server (median)`,
      ms,
      baseline,
      baselineName,
      'ms',
    ),
  );
out.write(
  `${JSON.stringify({
    name: 'pty-utils spawn and throughput',
    figures: [
      figure(
        'spawn+exit of echo hi, pipes (median)',
        spawnMs.spawnPipe,
        spawnMs.rawChildProcess,
        'raw child_process.spawn',
        'ms',
      ),
      figure(
        'spawn+exit of echo hi, PTY (median)',
        spawnMs.spawnPty,
        spawnMs.rawNodePty,
        'raw node-pty',
        'ms',
      ),
      ...forkedFigures,
      figure(
        '256 MiB of output, pipes',
        throughputMBps.spawnPipe,
        throughputMBps.rawChildProcess,
        'raw child_process.spawn',
        'MB/s',
      ),
      figure(
        '256 MiB of output, PTY',
        throughputMBps.spawnPty,
        throughputMBps.rawNodePty,
        'raw node-pty',
        'MB/s',
      ),
    ],
  })}\n`,
);
await forkServer?.close();
