/**
 * `cat` in a PTY, with a spare descriptor on the terminal so the terminal is not hung up before it
 * exits.
 *
 * HACK: node-pty (under @execd/pty-utils) closes the master as soon as every slave descriptor is
 * closed. GNU cat closes stdin/stdout/stderr at EOF before `_exit`, so on Ctrl-D the kernel then
 * sends SIGHUP to the still-running session leader and the exit is reported as 129 instead of 0
 * in about a third of the runs (raw node-pty shows the same; a master kept open, as Python's
 * `pty` or the original's portable-pty do, never does). Remove once pty-utils keeps the master
 * open until the child is reaped.
 */
export const TTY_CAT = 'exec 3<>/dev/tty; exec cat';
