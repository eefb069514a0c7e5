import { readFileSync } from 'node:fs';

/**
 * True while process `pid` runs. A zombie (exited, not yet reaped) counts as gone: on Linux the
 * state field of `/proc/<pid>/stat` decides; elsewhere `kill(pid, 0)`.
 */
export function isProcessRunning(pid: number): boolean {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
