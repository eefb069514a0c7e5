import { basename } from 'node:path';

/** bwrap options that take arguments, by count (bubblewrap 0.8-0.11 `--help`). Others take none. */
const BWRAP_OPTION_ARITY: ReadonlyMap<string, number> = new Map([
  ...[
    '--args',
    '--userns',
    '--userns2',
    '--pidns',
    '--uid',
    '--gid',
    '--hostname',
    '--chdir',
    '--unsetenv',
    '--lock-file',
    '--sync-fd',
    '--remount-ro',
    '--exec-label',
    '--file-label',
    '--proc',
    '--dev',
    '--tmpfs',
    '--mqueue',
    '--dir',
    '--seccomp',
    '--add-seccomp-fd',
    '--block-fd',
    '--userns-block-fd',
    '--info-fd',
    '--json-status-fd',
    '--cap-add',
    '--cap-drop',
    '--perms',
    '--size',
    '--argv0',
    '--overlay-src',
    '--tmp-overlay',
    '--ro-overlay',
  ].map((name) => [name, 1] as const),
  ...[
    '--setenv',
    '--bind',
    '--bind-try',
    '--dev-bind',
    '--dev-bind-try',
    '--ro-bind',
    '--ro-bind-try',
    '--bind-fd',
    '--ro-bind-fd',
    '--file',
    '--bind-data',
    '--ro-bind-data',
    '--symlink',
    '--chmod',
  ].map((name) => [name, 2] as const),
  ['--overlay', 3],
]);

/**
 * How far into the argv bubblewrap may start. The sandboxing package prefixes bwrap with a
 * launcher that opens the seccomp filter (`/bin/sh -c 'exec "$@" 9<"$0"' FILTER bwrap ...`),
 * so bwrap is at index 4 there; anything later is the command's own arguments.
 */
const MAX_LAUNCHER_ARGS = 4;

/** Index of bubblewrap in `argv` (directly, or after a short launcher prefix), or -1. */
export function bwrapIndex(argv: readonly string[]): number {
  for (let i = 0; i <= MAX_LAUNCHER_ARGS && i < argv.length; i++) {
    if (basename(argv[i] ?? '') === 'bwrap') return i;
  }
  return -1;
}

/** True when `argv` runs bubblewrap (`bwrap`, `/usr/bin/bwrap`, a bundled `.../bwrap`, or behind a launcher). */
export function isBwrapArgv(argv: readonly string[]): boolean {
  return bwrapIndex(argv) >= 0;
}

/**
 * Rewrites a bwrap argv built for `proxied` mode so the sandbox keeps the network namespace it is
 * started in (the bridge's): drops `--unshare-net` and adds `--share-net` after `--unshare-all`.
 * Only bwrap's own options are touched (it walks them with their argument counts and stops at
 * `--` or the command); a launcher prefix is kept as is; an argv without bwrap is returned unchanged.
 */
export function shareBridgeNetwork(argv: readonly string[]): string[] {
  const start = bwrapIndex(argv);
  if (start < 0) return [...argv];
  const out: string[] = argv.slice(0, start + 1);
  let i = start + 1;
  while (i < argv.length) {
    const arg = argv[i] ?? '';
    if (arg === '--' || !arg.startsWith('--')) break;
    const arity = BWRAP_OPTION_ARITY.get(arg) ?? 0;
    if (arg === '--unshare-net') {
      i++;
      continue;
    }
    out.push(...argv.slice(i, i + 1 + arity));
    if (arg === '--unshare-all') out.push('--share-net');
    i += 1 + arity;
  }
  out.push(...argv.slice(i));
  return out;
}
