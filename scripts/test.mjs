#!/usr/bin/env node
// `npm test`: set everything up, then lint, typecheck and run every package's vitest suite.
// Prints `N passed, N failed, N skipped` as the very last line (read by CI) and exits non-zero on
// any failure. Arguments after `--` filter the projects by directory name (e.g. `npm test -- protocol`).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_ENV, log, PNPM_BIN, ROOT, run } from './lib.mjs';

// The suites run thousands of login shells and kill some mid-start. On hosts whose rc files run
// `pyenv init`, a login shell killed during `pyenv rehash` leaves its lock behind, and every later
// login shell then waits up to 60 s for it. A negative timeout makes rehash give up at once
// (the shims already exist); every test's children inherit it.
const TEST_ENV = { ...BASE_ENV, PYENV_REHASH_TIMEOUT: process.env.PYENV_REHASH_TIMEOUT ?? '-1' };

const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];

function summaryAndExit() {
  if (failures.length > 0) log(`failed: ${failures.join('; ')}`);
  process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
  process.exit(totals.failed > 0 ? 1 : 0);
}

/** A whole-tree check (lint, typecheck) counts as one test. */
function check(name, cmd, args) {
  log(`check: ${name}`);
  if (run(cmd, args) === 0) totals.passed += 1;
  else {
    totals.failed += 1;
    failures.push(name);
  }
}

if (run(process.execPath, [join(ROOT, 'scripts', 'bootstrap.mjs'), 'test']) !== 0) {
  totals.failed += 1;
  failures.push('bootstrap');
  summaryAndExit();
}

if (filters.length === 0) {
  check('lint (biome)', PNPM_BIN, ['exec', 'biome', 'check', '.']);
  check('architecture (docs/architecture.md)', process.execPath, [
    join(ROOT, 'scripts', 'check-architecture.mjs'),
  ]);
  check('typecheck', PNPM_BIN, ['exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']);
}

const projects = [...readdirSync(join(ROOT, 'packages')).map((d) => join('packages', d)), 'tests'].filter(
  (dir) => existsSync(join(ROOT, dir, 'vitest.config.ts')),
);

const reportDir = mkdtempSync(join(tmpdir(), 'execd-test-'));
for (const dir of projects) {
  if (filters.length > 0 && !filters.some((f) => dir.includes(f))) continue;
  const reportFile = join(reportDir, `${dir.replaceAll('/', '_')}.json`);
  log(`vitest: ${dir}`);
  const code = run(
    PNPM_BIN,
    ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`],
    { cwd: join(ROOT, dir), env: TEST_ENV },
  );
  if (!existsSync(reportFile)) {
    totals.failed += 1;
    failures.push(`${dir} (vitest exited ${code} without a report)`);
    continue;
  }
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  totals.passed += report.numPassedTests ?? 0;
  totals.failed += report.numFailedTests ?? 0;
  totals.skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A suite that fails to load (syntax error, failing hook) has no failed *test*; count it.
  const brokenSuites = (report.testResults ?? []).filter(
    (r) => r.status === 'failed' && (r.assertionResults ?? []).every((a) => a.status !== 'failed'),
  );
  totals.failed += brokenSuites.length;
  if (code !== 0 && (report.numFailedTests ?? 0) === 0 && brokenSuites.length === 0) {
    totals.failed += 1;
    failures.push(`${dir} (vitest exited ${code})`);
  } else if (code !== 0) failures.push(dir);
}
rmSync(reportDir, { recursive: true, force: true });
summaryAndExit();
