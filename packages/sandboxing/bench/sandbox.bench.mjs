#!/usr/bin/env node
// Benchmarks what the sandbox costs a launch: spawn-to-exit of `echo hi` through spawnProcess,
// unsandboxed vs under bubblewrap (workspace-write, network off, the seccomp filter), for pipes
// and for a PTY. Runs are interleaved so that background load hits both sides alike.
// Prints a small table, then one JSON line with every figure (collected by the root bench runner).
// Usage: node bench/sandbox.bench.mjs   (needs `pnpm build` first: it imports ../dist/index.js)
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sandboxFromContext, spawnProcess } from '../dist/index.js';

/** Enough runs for a stable median of a ~10-30 ms operation while keeping the bench well under a minute. */
const RUNS = Number(process.env.SANDBOX_BENCH_RUNS ?? 40);
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'execd-sandbox-bench-')));
const sandbox = sandboxFromContext({ profile: 'workspace-write' }, cwd);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function once(sandboxed, tty) {
  const start = performance.now();
  const { process: child, sandboxType } = await spawnProcess({
    command: ['/bin/echo', 'hi'],
    cwd,
    env,
    sandbox: sandboxed ? sandbox : undefined,
    tty,
    stdinOpen: false,
  });
  let text = '';
  for await (const chunk of child.output()) text += Buffer.from(chunk.bytes).toString();
  const { exitCode } = await child.closed;
  const ms = performance.now() - start;
  await child.close();
  if (exitCode !== 0 || !text.includes('hi'))
    throw new Error(`bad run: exit ${exitCode}, output ${JSON.stringify(text)}`);
  if (sandboxed !== (sandboxType !== 'none')) throw new Error(`unexpected sandbox type ${sandboxType}`);
  return ms;
}

async function main() {
  // Warm-up: the first sandboxed launch also probes bubblewrap (cached afterwards).
  await once(true, false);
  await once(false, false);
  const samples = { pipePlain: [], pipeSandboxed: [], ptyPlain: [], ptySandboxed: [] };
  for (let i = 0; i < RUNS; i++) {
    samples.pipePlain.push(await once(false, false));
    samples.pipeSandboxed.push(await once(true, false));
    samples.ptyPlain.push(await once(false, true));
    samples.ptySandboxed.push(await once(true, true));
  }
  const figures = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  const round = (value) => Math.round(value * 100) / 100;
  const result = {
    bench: 'sandboxing.spawn-to-exit',
    runs: RUNS,
    unit: 'ms',
    pipeUnsandboxedMedianMs: round(figures.pipePlain),
    pipeSandboxedMedianMs: round(figures.pipeSandboxed),
    pipeRatio: round(figures.pipeSandboxed / figures.pipePlain),
    ptyUnsandboxedMedianMs: round(figures.ptyPlain),
    ptySandboxedMedianMs: round(figures.ptySandboxed),
    ptyRatio: round(figures.ptySandboxed / figures.ptyPlain),
  };
  console.log('spawn-to-exit of `echo hi`, median of %d (ms)', RUNS);
  console.log(
    '  pipes  unsandboxed %s  sandboxed %s  x%s',
    result.pipeUnsandboxedMedianMs,
    result.pipeSandboxedMedianMs,
    result.pipeRatio,
  );
  console.log(
    '  pty    unsandboxed %s  sandboxed %s  x%s',
    result.ptyUnsandboxedMedianMs,
    result.ptySandboxedMedianMs,
    result.ptyRatio,
  );
  const figure = (name, execd, baseline) => ({
    figure: name,
    execd: round(execd),
    baseline: round(baseline),
    baselineName: 'unsandboxed spawn',
    unit: 'ms',
    ratio: round(execd / baseline),
  });
  console.log(
    JSON.stringify({
      name: 'sandboxing',
      figures: [
        figure(
          `spawn+exit of echo hi under bwrap, pipes (median of ${RUNS})`,
          figures.pipeSandboxed,
          figures.pipePlain,
        ),
        figure(
          `spawn+exit of echo hi under bwrap, PTY (median of ${RUNS})`,
          figures.ptySandboxed,
          figures.ptyPlain,
        ),
      ],
    }),
  );
}

try {
  await main();
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
