import { ExecError } from '@execd/protocol';
import type { CommandLimits } from './resource-control.ts';

/**
 * Smallest memory limit accepted: bubblewrap, a shell and the kernel's per-cgroup charges need
 * a few MiB; below that every command would be OOM-killed before it starts.
 */
export const MIN_MEMORY_LIMIT_BYTES: number = 8 * 1024 * 1024;

/** bubblewrap (outside and as the sandbox's pid 1) plus a shell: fewer than 4 tasks cannot run anything. */
export const MIN_PROCESS_LIMIT = 4;

/** Smallest file-size limit: one 1024-byte `ulimit -f` block. */
export const MIN_FILE_LIMIT_BYTES = 1024;

function check(name: keyof CommandLimits, value: number | undefined, min: number, integer: boolean): void {
  if (value === undefined) return;
  const ok = Number.isFinite(value) && value >= min && (!integer || Number.isInteger(value));
  if (!ok) {
    throw new ExecError(
      'invalidParams',
      `limits.${name} must be ${integer ? 'an integer' : 'a finite number'} >= ${min}, got ${value}`,
    );
  }
}

/** Throws `invalidParams` naming the first bad field; `undefined` fields mean "not limited". */
export function validateLimits(limits: CommandLimits): void {
  check('maxProcesses', limits.maxProcesses, MIN_PROCESS_LIMIT, true);
  check('maxMemoryBytes', limits.maxMemoryBytes, MIN_MEMORY_LIMIT_BYTES, true);
  check('maxCpuSeconds', limits.maxCpuSeconds, Number.MIN_VALUE, false);
  check('maxFileBytes', limits.maxFileBytes, MIN_FILE_LIMIT_BYTES, true);
}
