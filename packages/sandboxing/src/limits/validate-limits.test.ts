import { describe, expect, test } from 'vitest';
import { DEFAULT_COMMAND_LIMITS, DEFAULT_MAX_MEMORY_BYTES } from './defaults.ts';
import { validateLimits } from './validate-limits.ts';

describe('validateLimits', () => {
  test('accepts the defaults and an empty set', () => {
    expect(() => validateLimits(DEFAULT_COMMAND_LIMITS)).not.toThrow();
    expect(() => validateLimits({})).not.toThrow();
    expect(DEFAULT_MAX_MEMORY_BYTES).toBeLessThanOrEqual(4 * 1024 ** 3);
  });

  test.each([
    { maxProcesses: 0 },
    { maxProcesses: 2.5 },
    { maxMemoryBytes: 1024 },
    { maxMemoryBytes: Number.POSITIVE_INFINITY },
    { maxCpuSeconds: 0 },
    { maxCpuSeconds: Number.NaN },
    { maxFileBytes: -1 },
  ])('refuses %j with invalidParams', (limits) => {
    expect(() => validateLimits(limits)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
  });
});
