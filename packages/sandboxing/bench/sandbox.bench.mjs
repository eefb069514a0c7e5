#!/usr/bin/env node
// Benchmarks what the sandbox costs a launch: spawn-to-exit of `echo hi` through spawnProcess,
// unsandboxed vs under bubblewrap (workspace-write, network off, the seccomp filter), for pipes
// and for a PTY, forked by this process; and on pipes again with both sides started by a fork
// server (pty-utils' ForkServer), as execd-server runs them by default. Runs are interleaved so
// that background load hits both sides alike.
// Prints a small table, then one JSON line with every figure (collected by the root bench runner).
// Usage: node bench/sandbox.bench.mjs   (needs `pnpm build` first: it imports ../dist/index.js)
// SANDBOX_BENCH_RUNS (default 40) and SANDBOX_BENCH_WAITERS (e.g. `bash`) tune it.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ForkServer } from '@execd/pty-utils';
import { PreparedSandboxes, sandboxFromContext, spawnProcess } from '../dist/index.js';

/** Enough runs for a stable median of a ~10-30 ms operation while keeping the bench well under a minute. */
const RUNS = Number(process.env.SANDBOX_BENCH_RUNS ?? 40);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'execd-sandbox-bench-')));
const sandbox = sandboxFromContext({ profile: 'workspace-write' }, cwd);
/**
 * Sandboxes started ahead of their commands (`PreparedSandboxes`), as execd-server runs them;
 * `SANDBOX_BENCH_WAITERS=bash` (comma-separated) compares the waiter programs.
 */
const waiters = process.env.SANDBOX_BENCH_WAITERS?.split(',');
const prepared = new PreparedSandboxes(waiters === undefined ? {} : { waiters });
/** execd-server's default spawner for commands on pipes (undefined where it cannot run). */
const forkServer = await ForkServer.start();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function once(sandboxed, tty, pool, forked = false) {
  const start = performance.now();
  const {
    process: child,
    sandboxType,
    prepared: wasPrepared,
  } = await spawnProcess({
    command: ['/bin/echo', 'hi'],
    cwd,
    env,
    sandbox: sandboxed ? sandbox : undefined,
    tty,
    stdinOpen: false,
    preparedSandboxes: pool,
    forkServer: forked ? forkServer : undefined,
  });
  let text = '';
  for await (const chunk of child.output()) text += Buffer.from(chunk.bytes).toString();
  const { exitCode } = await child.closed;
  const ms = performance.now() - start;
  await child.close();
  if (exitCode !== 0 || !text.includes('hi'))
    throw new Error(`bad run: exit ${exitCode}, output ${JSON.stringify(text)}`);
  if (sandboxed !== (sandboxType !== 'none')) throw new Error(`unexpected sandbox type ${sandboxType}`);
  return { ms, prepared: wasPrepared === true };
}

/**
 * A command in a sandbox prepared ahead (`PreparedSandboxes`), as an agent's next command finds
 * it: the sandbox started after the previous command of its kind has finished starting (the
 * pool is settled before the clock starts, so its work never overlaps another sample).
 */
async function oncePrepared(tty, forked = false) {
  await prepared.settled();
  const run = await once(true, tty, prepared, forked);
  if (!run.prepared) throw new Error('a settled pool had no sandbox ready');
  await prepared.settled();
  return run.ms;
}

async function main() {
  // Warm-up: the first sandboxed launch also probes bubblewrap (cached afterwards); the first two
  // pooled ones of each kind start cold, and the second leaves a sandbox waiting (a kind is
  // prepared for once it repeats).
  await once(true, false);
  await once(false, false);
  for (let i = 0; i < 2; i++) {
    await once(true, false, prepared);
    await once(true, true, prepared);
  }
  const samples = {
    pipePlain: [],
    pipeSandboxed: [],
    pipePrepared: [],
    ptyPlain: [],
    ptySandboxed: [],
    ptyPrepared: [],
    forkedPlain: [],
    forkedSandboxed: [],
    forkedPrepared: [],
  };
  for (let i = 0; i < RUNS; i++) {
    samples.pipePlain.push((await once(false, false)).ms);
    samples.pipeSandboxed.push((await once(true, false)).ms);
    samples.pipePrepared.push(await oncePrepared(false));
    samples.ptyPlain.push((await once(false, true)).ms);
    samples.ptySandboxed.push((await once(true, true)).ms);
    samples.ptyPrepared.push(await oncePrepared(true));
    if (forkServer === undefined) continue;
    samples.forkedPlain.push((await once(false, false, undefined, true)).ms);
    samples.forkedSandboxed.push((await once(true, false, undefined, true)).ms);
    samples.forkedPrepared.push(await oncePrepared(false, true));
  }
  const figures = Object.fromEntries(
    Object.entries(samples)
      .filter(([, values]) => values.length > 0)
      .map(([name, values]) => [name, median(values)]),
  );
  const round = (value) => Math.round(value * 100) / 100;
  const rows = [
    ['pipes', 'cold', figures.pipeSandboxed, figures.pipePlain],
    ['pipes', 'prepared', figures.pipePrepared, figures.pipePlain],
    ['PTY', 'cold', figures.ptySandboxed, figures.ptyPlain],
    ['PTY', 'prepared', figures.ptyPrepared, figures.ptyPlain],
    ...(forkServer === undefined
      ? []
      : [
          ['pipes', 'cold, fork server', figures.forkedSandboxed, figures.forkedPlain],
          ['pipes', 'prepared, fork server', figures.forkedPrepared, figures.forkedPlain],
        ]),
  ];
  console.log('spawn-to-exit of `echo hi`, median of %d (ms)', RUNS);
  for (const [io, start, sandboxed, plain] of rows) {
    console.log(
      '  %s  unsandboxed %s  sandboxed (%s) %s  x%s',
      io.padEnd(5),
      round(plain),
      start,
      round(sandboxed),
      round(sandboxed / plain),
    );
  }
  const described = {
    cold: 'started cold',
    prepared: 'in a prepared sandbox (--prepare-sandboxes)',
    'cold, fork server': "started cold, both sides by the fork server (execd-server's default)",
    'prepared, fork server': "in a prepared sandbox, both sides by the fork server (execd-server's default)",
  };
  console.log(
    JSON.stringify({
      name: 'sandboxing',
      figures: rows.map(([io, start, sandboxed, plain]) => ({
        figure: `spawn+exit of echo hi under bwrap ${described[start]}, ${io} (median of ${RUNS})`,
        execd: round(sandboxed),
        baseline: round(plain),
        baselineName: start.endsWith('fork server')
          ? 'unsandboxed spawn by the fork server'
          : 'unsandboxed spawn',
        unit: 'ms',
        ratio: round(sandboxed / plain),
      })),
    }),
  );
}

try {
  await main();
} finally {
  await prepared.close();
  await forkServer?.close();
  rmSync(cwd, { recursive: true, force: true });
}
