import { readdir, readFile } from 'node:fs/promises';

/** The fields of `/proc/<pid>/stat` an interrupt looks at (host pids, as this process sees them). */
interface Stat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** The terminal's foreground process group (0 or -1 without a terminal). */
  readonly tpgid: number;
}

async function readStat(pid: number): Promise<Stat | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid pgrp session tty_nr tpgid ...`; comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, pgrp, , , tpgid] = fields;
  if (state === undefined || state === 'Z' || state === 'X' || tpgid === undefined) return undefined;
  return { pid, ppid: Number(ppid), pgrp: Number(pgrp), tpgid: Number(tpgid) };
}

/** The live processes of this pid namespace (zombies left out). */
async function allStats(): Promise<Stat[]> {
  const names = await readdir('/proc');
  const stats = await Promise.all(names.filter((n) => /^\d+$/.test(n)).map((n) => readStat(Number(n))));
  return stats.filter((s): s is Stat => s !== undefined);
}

function send(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Delivers `signal` (SIGINT for an interrupt) to what a terminal would deliver it to inside a
 * bubblewrap sandbox whose outer bubblewrap is `outer` (our child): the command's foreground
 * process group, and never bubblewrap's own two processes (the outer one and the namespace's
 * init). bubblewrap dies of a SIGINT and kills the command with it (exit 130, the command's trap
 * never runs); spared, it reports the command's own exit status.
 *
 * From the host the sandbox's processes are ordinary processes with host pids: the command is the
 * child of the init, the init the child of `outer`. A pipe command runs in a session of its own
 * (`--new-session`): its group is signalled. A PTY command shares bubblewrap's session; the
 * terminal's foreground group (`tpgid`) is signalled when the command's shell put a job there,
 * else every process of bubblewrap's group but bubblewrap's own, one by one. Returns false when
 * the command is not there (not started yet, or gone): the caller then signals as without a sandbox.
 */
export async function interruptSandboxedCommand(
  outer: number,
  signal: NodeJS.Signals = 'SIGINT',
): Promise<boolean> {
  const stats = await allStats();
  const init = stats.find((s) => s.ppid === outer);
  const command = init === undefined ? undefined : stats.find((s) => s.ppid === init.pid);
  if (init === undefined || command === undefined) return false;
  if (command.pgrp !== init.pgrp) return send(-command.pgrp, signal);
  if (command.tpgid > 0 && command.tpgid !== init.pgrp) return send(-command.tpgid, signal);
  let reached = false;
  for (const s of stats) {
    if (s.pgrp === init.pgrp && s.pid !== outer && s.pid !== init.pid)
      reached = send(s.pid, signal) || reached;
  }
  return reached;
}
