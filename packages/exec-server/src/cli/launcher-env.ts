// Settings execd's own launchers (`npm start`, the container image, the bench) give the server's
// process through its environment, which its commands must not inherit. glibc reads its malloc
// tunables once, when the process starts: `MALLOC_MMAP_THRESHOLD_` fixed at 128 KiB keeps every
// large block (a multi-megabyte frame from a peer, its decoded payload) in memory of its own that
// goes back to the system when freed. Without it, glibc raises the threshold to the largest block
// freed so far and serves the next ones from its heap, which then stays as large as the largest
// burst of frames (measured: 20,000 hostile frames with 4 MiB strings grew the server's RSS by
// 47-51 MiB, 36-39 with the setting; streaming unchanged).

/** Names the launcher set for the server alone, comma-separated; removed, with itself, at start. */
export const LAUNCHER_ENV_VAR = 'EXECD_LAUNCHER_ENV';

/** The only names the marker can remove (the launcher's tunables, nothing a user relies on). */
const LAUNCHER_SET = new Set(['MALLOC_MMAP_THRESHOLD_']);

/** What a launcher adds to the server's environment, unless the user tuned malloc already. */
export function launcherEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || env.GLIBC_TUNABLES?.includes('malloc') === true) return {};
  return { MALLOC_MMAP_THRESHOLD_: '131072', [LAUNCHER_ENV_VAR]: 'MALLOC_MMAP_THRESHOLD_' };
}

/** Removes what the launcher set for this process alone, so that no command inherits it. */
export function dropLauncherEnv(env: NodeJS.ProcessEnv): void {
  const names = env[LAUNCHER_ENV_VAR];
  if (names === undefined) return;
  for (const name of names.split(',')) if (LAUNCHER_SET.has(name)) delete env[name];
  delete env[LAUNCHER_ENV_VAR];
}
