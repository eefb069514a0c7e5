import type { CommandLimits, LimitEvents, ResourceControl } from './resource-control.ts';

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** `64 MiB`, `1.5 GiB`, `512 bytes`: binary units, at most one decimal, trailing `.0` dropped. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(value) : String(Math.round(value * 10) / 10);
  return `${text} ${UNITS[unit]}`;
}

function seconds(value: number): string {
  return `${Math.round(value * 1000) / 1000} s`;
}

/**
 * One clause per limit the command hit, joined with `; ` (`undefined` when none), for the
 * tool result and for people, e.g. `the command hit its memory limit (2 GiB): the kernel killed
 * 1 of its processes`. Reaching the memory limit without an OOM kill is not reported: the
 * kernel then only reclaimed memory (page cache, often from writing large files), which is
 * harmless to the command.
 */
export function formatLimitHit(events: LimitEvents, limits: CommandLimits): string | undefined {
  const clauses: string[] = [];
  if (events.oomKills > 0) {
    const limit = limits.maxMemoryBytes === undefined ? '' : ` (${formatBytes(limits.maxMemoryBytes)})`;
    clauses.push(
      `the command hit its memory limit${limit}: the kernel killed ${events.oomKills === 1 ? '1 of its processes' : `${events.oomKills} of its processes`}`,
    );
  }
  if (events.pidsLimitHit) {
    const limit = limits.maxProcesses === undefined ? '' : ` (${limits.maxProcesses} processes and threads)`;
    clauses.push(`the command hit its process limit${limit}: some of its attempts to start more failed`);
  }
  if (events.cpuLimitHit === true) {
    const limit = limits.maxCpuSeconds === undefined ? '' : ` (${seconds(limits.maxCpuSeconds)})`;
    clauses.push(`the command used up its CPU-time limit${limit} and was killed`);
  }
  return clauses.length > 0 ? clauses.join('; ') : undefined;
}

/**
 * What is in force, for environment info and logs, e.g. `cgroup1 (pids, memory, cpu): at most
 * 1024 processes and threads, 4 GiB of memory, no CPU-time limit, files up to 4 GiB`, or
 * `none: <reason>; files up to 4 GiB`.
 */
export function describeLimitsInForce(control: ResourceControl, limits: CommandLimits): string {
  const file =
    limits.maxFileBytes === undefined
      ? 'no file-size limit'
      : `files up to ${formatBytes(limits.maxFileBytes)}`;
  if (control.kind === 'none') return `none: ${control.reason}; only ${file}`;
  const has = (c: 'pids' | 'memory' | 'cpu'): boolean => control.controllers.includes(c);
  const parts = [
    has('pids') && limits.maxProcesses !== undefined
      ? `at most ${limits.maxProcesses} processes and threads`
      : 'no process limit',
    has('memory') && limits.maxMemoryBytes !== undefined
      ? `${formatBytes(limits.maxMemoryBytes)} of memory`
      : 'no memory limit',
    has('cpu') && limits.maxCpuSeconds !== undefined
      ? `${seconds(limits.maxCpuSeconds)} of CPU time`
      : 'no CPU-time limit',
    file,
  ];
  const text = `${control.kind} (${control.controllers.join(', ')}): ${parts.join(', ')}`;
  return control.reason === undefined ? text : `${text} (${control.reason})`;
}
