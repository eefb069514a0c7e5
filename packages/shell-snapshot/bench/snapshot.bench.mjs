// Benchmark: a command through a warm shell snapshot vs. the login shell it replaces, and vs. a
// plain `bash -c`. One run gives all three medians, so the ratios compare like with like.
// Usage: node bench/snapshot.bench.mjs (after `pnpm build`). Prints a JSON line last.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShellSnapshotCache } from '../dist/index.js';

const RUNS = 11;
const BASH = '/bin/bash';

// A heavy login profile: 0.3 s of startup work plus some state worth keeping.
const PROFILE = [
  'sleep 0.3',
  'export PATH="$HOME/bin:$PATH" HEAVY_PROFILE=1',
  ...Array.from({ length: 200 }, (_, i) => `helper_${i}() { printf '%s' ${i}; }`),
  '',
].join('\n');

function timeRun(command) {
  const [file, ...args] = command.argv;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: command.cwd, env: command.env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${command.argv.slice(0, 2).join(' ')} exited with ${code}`));
    });
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (ms) => Math.round(ms * 100) / 100;
// stdout directly: the root lint config allows console only in the root bench/ folder.
const print = (line) => process.stdout.write(`${line}\n`);

const home = mkdtempSync(join(tmpdir(), 'execd-snapshot-bench-'));
writeFileSync(join(home, '.bash_profile'), PROFILE);
const env = { HOME: home, PATH: '/usr/bin:/bin' };
const login = { argv: [BASH, '-lc', 'true'], cwd: home, env };
const plain = { argv: [BASH, '-c', 'true'], cwd: home, env };
const input = {
  request: { scopeId: 'bench', shell: { name: 'bash', path: BASH } },
  argv: login.argv,
  env: {},
  command: login,
};

const cache = new ShellSnapshotCache({ createEnv: (_policy, base) => ({ ...base }) });
try {
  const warm = await cache.prepare(input); // the one capture, outside the timings
  if (warm.status !== 'restored') throw new Error(`snapshot not restored: ${JSON.stringify(warm)}`);

  const timings = { login: [], snapshot: [], plain: [] };
  for (let i = 0; i < RUNS; i++) {
    timings.login.push(await timeRun(login));
    const started = performance.now();
    const prepared = await cache.prepare(input); // key lookup (stats the rc files) + restore
    if (prepared.status !== 'restored') throw new Error('snapshot lost');
    timings.snapshot.push(performance.now() - started + (await timeRun(prepared.command)));
    timings.plain.push(await timeRun(plain));
  }
  const loginMs = median(timings.login);
  const snapshotMs = median(timings.snapshot);
  const plainMs = median(timings.plain);
  print(`bash -lc true, profile sleeps 0.3 s (no snapshot): ${round(loginMs)} ms median of ${RUNS}`);
  print(`bash -lc true through a warm snapshot:             ${round(snapshotMs)} ms`);
  print(`plain bash -c true:                                ${round(plainMs)} ms`);
  const figures = [
    {
      figure: 'bash -lc true with a warm snapshot vs. running the heavy login profile',
      execd: round(snapshotMs),
      baseline: round(loginMs),
      baselineName: 'bash -lc true (login profile sleeps 0.3 s)',
      unit: 'ms',
      ratio: Math.round((snapshotMs / loginMs) * 1000) / 1000,
    },
    {
      figure: 'bash -lc true with a warm snapshot vs. plain bash -c',
      execd: round(snapshotMs),
      baseline: round(plainMs),
      baselineName: 'bash -c true (no profile)',
      unit: 'ms',
      ratio: Math.round((snapshotMs / plainMs) * 1000) / 1000,
    },
  ];
  print(JSON.stringify({ name: 'shell-snapshot', figures }));
} finally {
  await cache.close();
  rmSync(home, { recursive: true, force: true });
}
