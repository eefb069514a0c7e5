import { mkdir } from 'node:fs/promises';
import { stat } from '../internal/fs-calls.ts';

/** bubblewrap flags whose next two operands are a host source and a destination. */
const TWO_PATHS = new Set(['--bind', '--ro-bind', '--bind-try', '--ro-bind-try', '--dev-bind']);
/** bubblewrap flags whose next operand is a path (a mount point, the working directory). */
const ONE_PATH = new Set(['--tmpfs', '--remount-ro', '--chdir']);
/** Flags with one operand that is not a host path to watch. */
const ONE_OTHER = new Set(['--dev', '--proc', '--dir', '--perms', '--seccomp', '--argv0']);

/**
 * Every host path bubblewrap's flags mount from or onto (and the working directory), in order.
 * A sandbox started earlier holds these folders as they were then: a mount follows the folder it
 * was made on when that folder is renamed, and a `-try` bind of a missing path is not made at all.
 */
export function mountPaths(flags: readonly string[]): string[] {
  const paths: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i]!;
    if (flag === '--') break;
    if (TWO_PATHS.has(flag)) {
      paths.push(flags[i + 1]!, flags[i + 2]!);
      i += 2;
    } else if (ONE_PATH.has(flag)) {
      paths.push(flags[i + 1]!);
      i += 1;
    } else if (flag === '--setenv') {
      i += 2;
    } else if (ONE_OTHER.has(flag)) {
      i += 1;
    }
  }
  return paths;
}

/**
 * What each path is now: its device and inode (following symlinks, as bubblewrap does), or
 * what kept it from being looked at. Two equal fingerprints taken at two times mean every mount
 * made in between still stands on the folder (or absence) the path names now.
 */
export async function mountFingerprint(paths: readonly string[]): Promise<string> {
  const looks = await Promise.all(
    paths.map((path) =>
      stat(path, { bigint: true }).then(
        (found) => `${found.dev}:${found.ino}`,
        (error: NodeJS.ErrnoException) => error.code ?? 'error',
      ),
    ),
  );
  return looks.join('\n');
}

/**
 * Makes the missing placeholders before bubblewrap would (an empty folder, as it makes them), so
 * that a fingerprint taken before the sandbox starts names the folders its masks stand on.
 * Fails silently: a path that cannot be made is fingerprinted as it is.
 */
export async function makePlaceholders(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => mkdir(path, { mode: 0o755 }).catch(() => undefined)));
}
