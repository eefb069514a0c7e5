import { tmpdir } from 'node:os';
import { openUnnamedFile } from '../internal/unnamed-file.ts';

/** Every distinct filter stays open for the life of this process; there are at most a handful. */
const filterFds = new Map<string, number>();

/**
 * A path any process of this user can open to read `bytes`: `/proc/<this pid>/fd/<fd>` of an
 * unnamed file this process keeps open. The sandbox launcher opens it as bwrap's `--seccomp`
 * fd; the sandboxed command cannot reach it (it sees only its own pid namespace).
 */
export function seccompFilterPath(bytes: Uint8Array, directory: string = tmpdir()): string {
  const key = Buffer.from(bytes).toString('base64');
  let fd = filterFds.get(key);
  if (fd === undefined) {
    fd = openUnnamedFile(bytes, 0o400, directory);
    filterFds.set(key, fd);
  }
  return `/proc/${process.pid}/fd/${fd}`;
}
