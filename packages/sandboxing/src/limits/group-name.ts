import { readFile, readlink } from 'node:fs/promises';
import { ExecError } from '@execd/protocol';

/**
 * Who owns a command group: the executor's pid, made unique over pid reuse by its start time
 * (clock ticks since boot, /proc/<pid>/stat field 22) and over pid namespaces by the namespace's
 * inode. Encoded in every group name so that a later executor can tell a crashed one's leftovers
 * (owner gone) from a live peer's groups sharing the same parent.
 */
export interface GroupOwner {
  readonly pidNamespace: string;
  readonly pid: number;
  readonly startTime: string;
}

/** Caller-chosen part of a group name: a path segment that cannot be `.`/`..` or hold a `/`. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const NAME_PATTERN = /^(\d+)\.(\d+)\.(\d+)\.([A-Za-z0-9_-]{1,64})$/;

/** The start time of `pid` from `<procRoot>/<pid>/stat`, or `undefined` when it is gone. */
export async function processStartTime(pid: number, procRoot: string = '/proc'): Promise<string | undefined> {
  let stat: string;
  try {
    stat = await readFile(`${procRoot}/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces and parentheses): state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

/** The identity of process `pid` (default: this one). */
export async function groupOwner(pid: number = process.pid, procRoot: string = '/proc'): Promise<GroupOwner> {
  const [link, startTime] = await Promise.all([
    readlink(`${procRoot}/${pid}/ns/pid`),
    processStartTime(pid, procRoot),
  ]);
  const inode = /\[(\d+)\]/.exec(link)?.[1];
  if (inode === undefined || startTime === undefined) {
    throw new ExecError('unsupported', `cannot identify process ${pid} from ${procRoot} (${link})`);
  }
  return { pidNamespace: inode, pid, startTime };
}

/** `<pidns>.<pid>.<starttime>.<id>`; throws `invalidParams` for an id that is not `[A-Za-z0-9_-]{1,64}`. */
export function commandGroupName(owner: GroupOwner, id: string): string {
  if (!ID_PATTERN.test(id)) {
    throw new ExecError('invalidParams', `id must match ${ID_PATTERN.source}, got ${JSON.stringify(id)}`);
  }
  return `${owner.pidNamespace}.${owner.pid}.${owner.startTime}.${id}`;
}

/** The owner and id encoded in a group name, or `undefined` for a name execd did not make. */
export function parseCommandGroupName(name: string): { owner: GroupOwner; id: string } | undefined {
  const match = NAME_PATTERN.exec(name);
  if (!match) return undefined;
  return {
    owner: { pidNamespace: match[1]!, pid: Number(match[2]), startTime: match[3]! },
    id: match[4]!,
  };
}
