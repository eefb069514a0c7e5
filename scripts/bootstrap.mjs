#!/usr/bin/env node
// Sets everything up on a fresh machine that has only Node 20+ and npm:
//   1. system packages the sandbox and snapshot tests need (bubblewrap, zsh) via apt-get when root;
//   2. pnpm 12.4.2 into ./.tools (never global, no corepack);
//   3. `pnpm install --frozen-lockfile`;
//   4. `turbo run build`.
// Usage: node scripts/bootstrap.mjs [--for test|start]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE_ENV, log, PNPM_BIN, PNPM_VERSION, ROOT, run, runOrDie, TOOLS_DIR, which } from './lib.mjs';

const purpose = process.argv.includes('start') ? 'start' : 'test';

/** Debian package name for each program the project needs at run time. */
const SYSTEM_PROGRAMS = { bwrap: 'bubblewrap', zsh: 'zsh' };

function ensureSystemPackages() {
  const missing = Object.entries(SYSTEM_PROGRAMS).filter(([program]) => !which(program));
  if (missing.length === 0) return;
  const packages = missing.map(([, pkg]) => pkg);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && which('apt-get')) {
    log(`installing ${packages.join(', ')} with apt-get`);
    if (run('apt-get', ['update', '-qq']) !== 0) log('apt-get update failed; trying the install anyway');
    const code = run('apt-get', ['install', '-y', '-qq', ...packages], {
      env: { ...BASE_ENV, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (code === 0) return;
  }
  const hint = `install the Debian package(s) ${packages.join(' ')} (e.g. \`sudo apt-get install -y ${packages.join(' ')}\`)`;
  if (purpose === 'test') {
    log(
      `missing ${missing.map(([p]) => p).join(', ')}: the sandbox and shell-snapshot tests need them; ${hint}`,
    );
    process.exit(1);
  }
  log(
    `warning: missing ${missing.map(([p]) => p).join(', ')}; sandboxed commands will fail until you ${hint}`,
  );
}

function ensurePnpm() {
  if (existsSync(PNPM_BIN)) {
    const pkg = join(TOOLS_DIR, 'node_modules', 'pnpm', 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).version === PNPM_VERSION) return;
  }
  log(`installing pnpm ${PNPM_VERSION} into .tools/`);
  runOrDie('npm', [
    'install',
    '--prefix',
    TOOLS_DIR,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    `pnpm@${PNPM_VERSION}`,
  ]);
}

ensureSystemPackages();
ensurePnpm();
const frozen = existsSync(join(ROOT, 'pnpm-lock.yaml')) ? ['--frozen-lockfile'] : [];
runOrDie(PNPM_BIN, ['install', ...frozen, '--reporter=append-only']);
// Progress: tsup's lines for each package built, one `cache hit` line for each one replayed, so a
// first build (~35 s) is not silent and a cached one says why it was fast.
log('building the packages with turbo (cached packages replay at once)');
const buildStart = Date.now();
runOrDie(PNPM_BIN, ['exec', 'turbo', 'run', 'build', '--output-logs=new-only']);
log(`build done in ${((Date.now() - buildStart) / 1000).toFixed(1)} s`);
