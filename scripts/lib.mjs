// Shared helpers for the root scripts (bootstrap, start, test). Plain Node, no dependencies:
// these run before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PNPM_VERSION = '12.4.2';
export const TOOLS_DIR = join(ROOT, '.tools');
export const PNPM_BIN = join(TOOLS_DIR, 'node_modules', '.bin', 'pnpm');

/** Environment for every child: no telemetry, no colours (CI parses our output). */
export const BASE_ENV = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  PATH: `${join(TOOLS_DIR, 'node_modules', '.bin')}:${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
};

export function log(message) {
  process.stderr.write(`[execd] ${message}\n`);
}

/** Runs a command with inherited stdio; returns its exit code. */
export function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env: BASE_ENV, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

export function runOrDie(cmd, args, options = {}) {
  const code = run(cmd, args, options);
  if (code !== 0) {
    log(`\`${cmd} ${args.join(' ')}\` failed with exit code ${code}`);
    process.exit(code);
  }
}

export function which(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}
