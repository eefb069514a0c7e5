// The original Codex CLI for the compatibility suites and side-by-side benchmarks: the npm
// package @openai/codex, pinned, installed once into a cache outside the repository.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Codex version execd matches (docs/codex-exec-spec.md). */
export const CODEX_PEER_VERSION = '0.169.0';

/**
 * Where the pinned original is installed: `$CODEX_PEER_DIR`, else
 * `${XDG_CACHE_HOME:-~/.cache}/execd-peers/codex-<version>` (shared by every checkout).
 */
export function codexPeerDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CODEX_PEER_DIR) return env.CODEX_PEER_DIR;
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'execd-peers', `codex-${CODEX_PEER_VERSION}`);
}

/**
 * Path of the pinned original `codex` executable, installing it with npm on first use (about
 * 400 MB; npm's progress goes to stderr). An existing install is reused as it is.
 */
export function installCodexPeer(env: NodeJS.ProcessEnv = process.env): string {
  const dir = codexPeerDir(env);
  const bin = join(dir, 'node_modules', '.bin', 'codex');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) {
    writeFileSync(manifest, `${JSON.stringify({ name: 'execd-codex-peer', private: true }, null, 2)}\n`);
  }
  process.stderr.write(`installing @openai/codex@${CODEX_PEER_VERSION} into ${dir}\n`);
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--save-exact', `@openai/codex@${CODEX_PEER_VERSION}`],
    { cwd: dir, stdio: ['ignore', process.stderr, process.stderr], env },
  );
  if (!existsSync(bin)) throw new Error(`npm installed @openai/codex but ${bin} is missing`);
  return bin;
}
