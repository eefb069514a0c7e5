#!/usr/bin/env node
// The root scripts that run a workspace script through pnpm (`npm run bench`, `npm run
// test:compat`, `npm run test:stress`): pnpm lives in ./.tools (never global), so this sets it up
// first on a fresh clone (scripts/bootstrap.mjs: pnpm, install, build), then runs
// `pnpm <args>` with ./.tools on PATH (for the package scripts' own `pnpm` calls).
// Usage: node scripts/workspace-run.mjs <pnpm args...>
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_ENV, log, PNPM_BIN, ROOT, run } from './lib.mjs';

const args = process.argv.slice(2);
if (args.length === 0) {
  log('usage: node scripts/workspace-run.mjs <pnpm args...>');
  process.exit(2);
}

/** Whether the tree was set up: pnpm installed, dependencies installed, packages built. */
function setUp() {
  return (
    existsSync(PNPM_BIN) &&
    existsSync(join(ROOT, 'node_modules', '.modules.yaml')) &&
    existsSync(join(ROOT, 'packages', 'exec-server', 'dist', 'cli', 'execd-server.js'))
  );
}

if (!setUp()) {
  log('setting up first (pnpm into .tools/, install, build)');
  if (run(process.execPath, [join(ROOT, 'scripts', 'bootstrap.mjs'), 'start']) !== 0) process.exit(1);
}
process.exit(run(PNPM_BIN, args, { env: BASE_ENV }));
