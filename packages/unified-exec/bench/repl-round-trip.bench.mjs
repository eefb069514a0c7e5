#!/usr/bin/env node
// The python3 REPL round trip (needs `pnpm build` first: it imports ../dist/index.js): one
// write_stdin of `print(i * 7)` with the default yield (250 ms), answer and next prompt collected,
// with the input-wait detection (execd's default) against the designed wait (returnOnInputWait:
// false: 100 ms settle after the write + the 250 ms yield, the original's behaviour); and the
// exec_command of `python3 -q` with a 10 s yield (returns at the first prompt vs at the yield).
// Local (direct spawn) and through an execd-server on ws://127.0.0.1:0. Measures only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { Environment, UnifiedExecProcessManager, UnifiedExecTools } from '../dist/index.js';

/** Round trips per configuration (each designed one waits ~350 ms). */
const ROUND_TRIPS = Number(process.env.UEXEC_BENCH_REPL_ROUNDS ?? 20);
const cwd = mkdtempSync(join(tmpdir(), 'uexec-repl-bench-'));
const out = process.stderr;

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const round = (value) => Math.round(value * 10) / 10;

function figure(name, execd, baseline, unit) {
  return {
    figure: name,
    execd: round(execd),
    baseline: round(baseline),
    baselineName: 'designed wait (returnOnInputWait: false)',
    unit,
    ratio: Math.round((execd / baseline) * 1000) / 1000,
  };
}

/** One REPL session: start time, then ROUND_TRIPS round trips (ms each); checks every answer. */
async function measure(environment, returnOnInputWait) {
  const manager = new UnifiedExecProcessManager({ processIds: 'deterministic', returnOnInputWait });
  const tools = new UnifiedExecTools({ manager, environments: environment });
  try {
    let started = performance.now();
    const start = await tools.execCommand({ cmd: 'python3 -q', tty: true, yield_time_ms: 10_000 });
    const startMs = performance.now() - started;
    const session = Number(/session ID (\d+)/.exec(start.text)?.[1]);
    if (!Number.isInteger(session)) throw new Error(`no session: ${start.text}`);
    // Warm up (the first statement imports more of the REPL).
    await tools.writeStdin({ session_id: session, chars: 'x = 1\n', yield_time_ms: 10_000 });
    const times = [];
    for (let i = 0; i < ROUND_TRIPS; i++) {
      started = performance.now();
      const result = await tools.writeStdin({ session_id: session, chars: `print(${i} * 7)\n` });
      times.push(performance.now() - started);
      if (!result.text.includes(`${i * 7}\r\n>>> `)) throw new Error(`round trip ${i}: ${result.text}`);
    }
    await tools.writeStdin({ session_id: session, chars: 'exit()\n', yield_time_ms: 10_000 });
    return { startMs, times };
  } finally {
    await manager.close();
  }
}

async function compare(label, environment, figures) {
  // Interleaved, so load on a shared machine hits both alike.
  const detect = await measure(environment, true);
  const designed = await measure(environment, false);
  const p50 = percentile(detect.times, 50);
  const p50Designed = percentile(designed.times, 50);
  out.write(
    `${label}: round trip p50 ${p50.toFixed(1)} ms (designed ${p50Designed.toFixed(1)} ms), ` +
      `p95 ${percentile(detect.times, 95).toFixed(1)} ms; exec_command to the first prompt ` +
      `${detect.startMs.toFixed(0)} ms (designed ${designed.startMs.toFixed(0)} ms)\n`,
  );
  figures.push(
    figure(`${label}: python3 REPL round trip p50 (write_stdin, default yield)`, p50, p50Designed, 'ms'),
  );
  figures.push(
    figure(
      `${label}: python3 REPL round trip p95`,
      percentile(detect.times, 95),
      percentile(designed.times, 95),
      'ms',
    ),
  );
  figures.push(
    figure(
      `${label}: exec_command \`python3 -q\` (yield 10 s) to the first prompt`,
      detect.startMs,
      designed.startMs,
      'ms',
    ),
  );
}

const figures = [];
const local = Environment.local({
  cwd,
  shell: '/bin/bash',
  permissionProfile: 'danger-full-access',
  allowLoginShell: false,
});
try {
  await compare('local', local, figures);
} finally {
  await local.close();
}
const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
try {
  const remote = await Environment.connect({
    url: server.url,
    cwd,
    shell: '/bin/bash',
    permissionProfile: 'danger-full-access',
    allowLoginShell: false,
  });
  try {
    await compare('execd-server', remote, figures);
  } finally {
    await remote.close();
  }
} finally {
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
}
process.stdout.write(
  `${JSON.stringify({ name: 'unified-exec: REPL round trip (input-wait detection)', figures })}\n`,
);
