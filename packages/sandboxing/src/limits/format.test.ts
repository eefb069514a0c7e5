import { describe, expect, test } from 'vitest';
import { DEFAULT_COMMAND_LIMITS } from './defaults.ts';
import { describeLimitsInForce, formatBytes, formatLimitHit } from './format.ts';

const quiet = { memoryLimitHit: false, oomKills: 0, pidsLimitHit: false };

describe('formatBytes', () => {
  test.each([
    [512, '512 bytes'],
    [64 * 1024 ** 2, '64 MiB'],
    [1.5 * 1024 ** 3, '1.5 GiB'],
    [2 * 1024 ** 3, '2 GiB'],
  ])('%d → %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));
});

describe('formatLimitHit', () => {
  test('nothing hit: undefined, and reclaim alone is not reported', () => {
    expect(formatLimitHit(quiet, DEFAULT_COMMAND_LIMITS)).toBeUndefined();
    expect(
      formatLimitHit({ ...quiet, memoryLimitHit: true, cpuLimitHit: false }, DEFAULT_COMMAND_LIMITS),
    ).toBeUndefined();
  });

  test('one clause per limit hit, with the limit', () => {
    const limits = { maxMemoryBytes: 2 * 1024 ** 3, maxProcesses: 50, maxCpuSeconds: 1 };
    expect(formatLimitHit({ ...quiet, memoryLimitHit: true, oomKills: 1 }, limits)).toBe(
      'the command hit its memory limit (2 GiB): the kernel killed 1 of its processes',
    );
    expect(formatLimitHit({ ...quiet, pidsLimitHit: true, cpuLimitHit: true }, limits)).toBe(
      'the command hit its process limit (50 processes and threads): some of its attempts to start more failed; ' +
        'the command used up its CPU-time limit (1 s) and was killed',
    );
  });
});

describe('describeLimitsInForce', () => {
  test('names the kind, the limits, and why none can be enforced', () => {
    const limits = { maxProcesses: 1024, maxMemoryBytes: 4 * 1024 ** 3, maxFileBytes: 4 * 1024 ** 3 };
    expect(
      describeLimitsInForce({ kind: 'cgroup1', controllers: ['pids', 'memory', 'cpu'], parent: {} }, limits),
    ).toBe(
      'cgroup1 (pids, memory, cpu): at most 1024 processes and threads, 4 GiB of memory, no CPU-time limit, files up to 4 GiB',
    );
    expect(
      describeLimitsInForce({ kind: 'none', controllers: [], parent: undefined, reason: 'r' }, limits),
    ).toBe('none: r; only files up to 4 GiB');
  });
});
