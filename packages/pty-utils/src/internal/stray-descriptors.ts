/**
 * Descriptors a child would inherit without asking for them. Node and libuv open every descriptor
 * close-on-exec, but node-pty's terminal masters are not, and libuv closes nothing else in the
 * child: a command started while another command's terminal is open would hold that terminal's
 * master (it could read that session's output and type into it, and the terminal is not freed
 * until every copy is closed). While this process has a master open, spawns go through the exec
 * wrapper, which closes every descriptor above 2 before it execs the program (see
 * `cgroup-join.ts`). Masters made by other code in the process, and descriptors the process
 * inherited, are not tracked: `execd-server` and `uexec` close the latter at start-up
 * (`closeInheritedDescriptors`).
 */
const masters = new Set<{ readonly destroyed: boolean }>();

/**
 * Counts a terminal master as open until its stream is destroyed (destroying the stream closes
 * the descriptor at once; its `close` event comes a turn later, too late for a spawn right after).
 */
export function trackStrayMaster(master: { readonly destroyed: boolean }): void {
  masters.add(master);
}

/** Whether a child forked now would inherit a descriptor it was not given (a terminal master). */
export function strayDescriptorsOpen(): boolean {
  for (const master of masters) if (master.destroyed) masters.delete(master);
  return masters.size > 0;
}
