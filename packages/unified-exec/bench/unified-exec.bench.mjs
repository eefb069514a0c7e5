#!/usr/bin/env node
// Benchmarks @execd/unified-exec (needs `pnpm build` first: it imports ../dist/index.js):
//   1. exec_command of `echo hi` (local, pipes) vs a raw child_process.spawn of the same argv;
//   2. the same exec_command through an execd-server (in-process, ws://127.0.0.1:0) vs local;
//   3. 64 live tty sessions written to round-robin: p50 and p99 of one write_stdin call, against
//      the wait every such call makes by design (100 ms settle after the write + 250 ms yield).
// Prints a small table, then the result line (the last stdout line). Measures only; never asserts.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { Environment, UnifiedExecProcessManager, UnifiedExecTools } from '../dist/index.js';

/** Enough runs for a stable median of a few-millisecond operation on a loaded 2-core machine. */
const RUNS = Number(process.env.UEXEC_BENCH_RUNS ?? 30);
/** Live sessions of figure 3 (the process store's cap). */
const SESSIONS = 64;
/** Round-robin passes over the sessions in figure 3 (each write_stdin waits ~350 ms by design). */
const PASSES = Number(process.env.UEXEC_BENCH_PASSES ?? 2);
const ARGV = ['/bin/bash', '-c', 'echo hi'];
const cwd = mkdtempSync(join(tmpdir(), 'uexec-bench-'));
const out = process.stderr;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (value) => Math.round(value * 1000) / 1000;

function figure(name, execd, baseline, baselineName, unit) {
  return {
    figure: name,
    execd: round(execd),
    baseline: round(baseline),
    baselineName,
    unit,
    ratio: round(execd / baseline),
  };
}

/** A raw spawn of the same argv, resolved once it exited and its pipes closed. */
function rawSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn(ARGV[0], ARGV.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve(output));
  });
}

function tools(environment) {
  const manager = new UnifiedExecProcessManager({ approvalPolicy: 'never' });
  return new UnifiedExecTools({ manager, environments: environment });
}

async function timeIt(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function execEcho(target) {
  const result = await target.execCommand({ cmd: 'echo hi' });
  if (!result.text.endsWith('Output:\nhi\n')) throw new Error(`unexpected result: ${result.text}`);
}

async function main() {
  const environmentOptions = {
    cwd,
    shell: '/bin/bash',
    permissionProfile: 'danger-full-access',
    allowLoginShell: false,
  };
  const local = Environment.local(environmentOptions);
  const localTools = tools(local);
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const remote = await Environment.connect({ ...environmentOptions, url: server.url });
  const remoteTools = tools(remote);
  try {
    // Warm-up (module loading, the first bwrap-free spawn, the connection).
    for (let i = 0; i < 3; i++) {
      await rawSpawn();
      await execEcho(localTools);
      await execEcho(remoteTools);
    }
    // Interleaved rounds, so load on the shared machine hits all three alike.
    const samples = { raw: [], local: [], remote: [] };
    for (let i = 0; i < RUNS; i++) {
      samples.raw.push(await timeIt(rawSpawn));
      samples.local.push(await timeIt(() => execEcho(localTools)));
      samples.remote.push(await timeIt(() => execEcho(remoteTools)));
    }
    const raw = median(samples.raw);
    const localMs = median(samples.local);
    const remoteMs = median(samples.remote);
    out.write(
      `exec_command echo hi (median of ${RUNS}, ms): raw spawn ${raw.toFixed(2)}  local ${localMs.toFixed(2)}  remote ${remoteMs.toFixed(2)}\n`,
    );

    // Figure 3: 64 live tty sessions, written to round-robin.
    const ids = [];
    for (let i = 0; i < SESSIONS; i++) {
      const started = await localTools.execCommand({ cmd: 'cat', tty: true, yield_time_ms: 250 });
      const id = /Process running with session ID (\d+)/.exec(started.text)?.[1];
      if (id === undefined) throw new Error(`session ${i} did not stay alive: ${started.text}`);
      ids.push(Number(id));
    }
    const writes = [];
    for (let pass = 0; pass < PASSES; pass++) {
      for (const id of ids) {
        writes.push(
          await timeIt(async () => {
            const result = await localTools.writeStdin({ session_id: id, chars: `p${pass}\n` });
            if (!result.success) throw new Error(result.text);
          }),
        );
      }
    }
    const p50 = percentile(writes, 50);
    const p99 = percentile(writes, 99);
    out.write(
      `write_stdin over ${SESSIONS} live sessions (${writes.length} calls, ms): p50 ${p50.toFixed(1)}  p99 ${p99.toFixed(1)}\n`,
    );

    const designWaitMs = 100 + 250;
    return [
      figure(
        `exec_command echo hi, local pipes (median of ${RUNS})`,
        localMs,
        raw,
        'raw child_process.spawn of bash -c',
        'ms',
      ),
      figure(
        `exec_command echo hi via execd-server ws (median of ${RUNS})`,
        remoteMs,
        localMs,
        'the same call, local',
        'ms',
      ),
      figure(
        `write_stdin p50 over ${SESSIONS} live tty sessions`,
        p50,
        designWaitMs,
        'designed wait (100 ms settle + 250 ms yield)',
        'ms',
      ),
      figure(
        `write_stdin p99 over ${SESSIONS} live tty sessions`,
        p99,
        designWaitMs,
        'designed wait (100 ms settle + 250 ms yield)',
        'ms',
      ),
    ];
  } finally {
    await localTools.manager.close();
    await remoteTools.manager.close();
    await remote.close();
    await local.close();
    await server.close();
  }
}

try {
  const figures = await main();
  process.stdout.write(`${JSON.stringify({ name: 'unified-exec', figures })}\n`);
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
