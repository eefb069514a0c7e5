#!/usr/bin/env node
// Runs every `*.bench.mjs` under bench/ and packages/*/bench/, one at a time, collects the JSON
// line each prints last on stdout (format: README.md), and writes bench/results/latest.json and
// bench/results/latest.md (with a FILTER: partial.json and partial.md, so the committed full
// report stays). Usage: node run.mjs [FILTER...]  (FILTER: substring of a bench path).
// The packages must be built first (`pnpm build` at the root).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH_DIR);
const RESULTS_DIR = join(BENCH_DIR, 'results');
/** A bench that runs longer than this is killed and reported as failed (override: BENCH_TIMEOUT_MS). */
const BENCH_TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 15 * 60_000);

/** `*.bench.mjs` files below `dir`, skipping node_modules and results. */
function findBenches(dir) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'results' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findBenches(path));
    else if (entry.name.endsWith('.bench.mjs')) found.push(path);
  }
  return found;
}

/** Checks one bench's last stdout line against the format in README.md; returns the problem or null. */
function formatProblem(result) {
  if (typeof result !== 'object' || result === null) return 'the last line is not a JSON object';
  if (typeof result.name !== 'string' || result.name === '') return '`name` must be a non-empty string';
  if (!Array.isArray(result.figures) || result.figures.length === 0)
    return '`figures` must be a non-empty array';
  for (const [i, f] of result.figures.entries()) {
    const where = `figures[${i}]`;
    if (typeof f.figure !== 'string' || f.figure === '') return `${where}.figure must be a non-empty string`;
    if (typeof f.execd !== 'number' || !Number.isFinite(f.execd))
      return `${where}.execd must be a finite number`;
    if (f.baseline !== null && (typeof f.baseline !== 'number' || !Number.isFinite(f.baseline))) {
      return `${where}.baseline must be a finite number or null`;
    }
    if (typeof f.unit !== 'string' || f.unit === '') return `${where}.unit must be a non-empty string`;
    if (f.ratio !== null && (typeof f.ratio !== 'number' || !Number.isFinite(f.ratio))) {
      return `${where}.ratio must be a finite number or null`;
    }
    if (f.baselineName !== null && typeof f.baselineName !== 'string')
      return `${where}.baselineName must be a string or null`;
    if ((f.baseline === null) !== (f.baselineName === null))
      return `${where}: baseline and baselineName go together`;
  }
  return null;
}

/** Runs one bench file; resolves with its parsed result or an error text. */
function runBench(file) {
  return new Promise((resolvePromise) => {
    const started = Date.now();
    const child = spawn(process.execPath, [file], {
      cwd: dirname(file),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      stdout += text;
      process.stdout.write(text);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), BENCH_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const durationMs = Date.now() - started;
      const lines = stdout.split('\n').filter((line) => line.trim() !== '');
      const last = lines.at(-1);
      if (code !== 0) {
        resolvePromise({ error: `exited with ${signal ?? `code ${code}`}`, durationMs });
        return;
      }
      let result;
      try {
        result = JSON.parse(last ?? '');
      } catch {
        resolvePromise({ error: 'the last stdout line is not JSON', durationMs });
        return;
      }
      const problem = formatProblem(result);
      resolvePromise(problem ? { error: problem, durationMs } : { result, durationMs });
    });
  });
}

function machine() {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    cpu: `${cpus[0]?.model.trim() ?? 'unknown'} x ${cpus.length}`,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    node: process.version,
  };
}

/** Three significant digits, no exponent for ordinary magnitudes. */
function formatNumber(value) {
  if (value === null || value === undefined) return '–';
  if (value === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return value.toLocaleString('en-US', {
    maximumFractionDigits: Math.min(digits, 6),
    minimumFractionDigits: 0,
  });
}

function toMarkdown(report) {
  const m = report.machine;
  const lines = [
    '# Benchmark results',
    '',
    `Date: ${report.date}  `,
    `Machine: ${m.os}, ${m.cpu}, ${m.memoryGiB} GiB, load average ${m.loadAverage.join(' / ')}, Node ${m.node}`,
    '',
    'Ratio = execd / baseline, measured in the same run. Units say which way is better (MB/s, ops/s: higher; ms, bytes: lower).',
    '',
    '| bench | figure | execd | baseline / peer | ratio | unit |',
    '| --- | --- | ---: | --- | ---: | --- |',
  ];
  for (const bench of report.benches) {
    if (bench.error) {
      lines.push(`| ${bench.file} | **failed: ${bench.error}** | | | | |`);
      continue;
    }
    for (const f of bench.figures) {
      const baseline = f.baseline === null ? '–' : `${formatNumber(f.baseline)} (${f.baselineName})`;
      lines.push(
        `| ${bench.name} | ${f.figure} | ${formatNumber(f.execd)} | ${baseline} | ${f.ratio === null ? '–' : formatNumber(f.ratio)} | ${f.unit} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const filters = process.argv.slice(2);
const packagesDir = join(ROOT, 'packages');
const files = [
  ...findBenches(BENCH_DIR),
  ...(existsSync(packagesDir)
    ? readdirSync(packagesDir).flatMap((name) => findBenches(join(packagesDir, name, 'bench')))
    : []),
]
  .map((file) => relative(ROOT, file))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();

if (files.length === 0) {
  console.error(`no *.bench.mjs files${filters.length > 0 ? ` match ${filters.join(', ')}` : ''}`);
  process.exit(1);
}

const report = { date: new Date().toISOString(), machine: machine(), benches: [] };
for (const file of files) {
  console.error(`\n== ${file}`);
  const outcome = await runBench(join(ROOT, file));
  if (outcome.error) {
    console.error(`== ${file}: FAILED (${outcome.error})`);
    report.benches.push({ file, error: outcome.error, durationMs: outcome.durationMs });
  } else {
    report.benches.push({
      file,
      name: outcome.result.name,
      figures: outcome.result.figures,
      durationMs: outcome.durationMs,
    });
  }
}

// Only a full run replaces the committed report; a filtered one (a single bench) goes to
// partial.{json,md}, which git ignores.
const base = filters.length === 0 ? 'latest' : 'partial';
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(join(RESULTS_DIR, `${base}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(RESULTS_DIR, `${base}.md`), toMarkdown(report));
const failed = report.benches.filter((bench) => bench.error).length;
console.error(
  `\nwrote ${relative(ROOT, join(RESULTS_DIR, `${base}.md`))} (${report.benches.length - failed} ok, ${failed} failed)`,
);
process.exit(failed > 0 ? 1 : 0);
