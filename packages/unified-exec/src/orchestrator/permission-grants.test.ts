import { describe, expect, test } from 'vitest';
import {
  EMPTY_GRANT,
  grantCovers,
  grantFromAdditionalPermissions,
  grantToAdditionalPermissions,
  mergeGrants,
} from './permission-grants.ts';

describe('permission grants', () => {
  test('normalised: relative paths against the cwd, deduplicated, sorted; network only when enabled', () => {
    expect(
      grantFromAdditionalPermissions(
        {
          network: { enabled: false },
          file_system: { write: ['out', '/abs/x/../y', '/work/out'], read: ['/r'] },
        },
        '/work',
      ),
    ).toEqual({ network: false, read: ['/r'], write: ['/abs/y', '/work/out'] });
  });

  test('a grant covers what is inside it; a write covers reads', () => {
    const granted = { network: false, read: ['/data'], write: ['/out'] };
    expect(grantCovers(granted, { network: false, read: ['/out/a', '/data'], write: ['/out/sub'] })).toBe(
      true,
    );
    expect(grantCovers(granted, { network: false, read: [], write: ['/outside'] })).toBe(false);
    expect(grantCovers(granted, { network: false, read: [], write: ['/data'] })).toBe(false);
    expect(grantCovers(granted, { network: true, read: [], write: [] })).toBe(false);
    expect(grantCovers(EMPTY_GRANT, EMPTY_GRANT)).toBe(true);
  });

  test('merge and the model-facing shape', () => {
    const merged = mergeGrants(
      { network: false, read: [], write: ['/b'] },
      { network: true, read: ['/r'], write: ['/a', '/b'] },
    );
    expect(merged).toEqual({ network: true, read: ['/r'], write: ['/a', '/b'] });
    expect(grantToAdditionalPermissions(merged)).toEqual({
      network: { enabled: true },
      file_system: { read: ['/r'], write: ['/a', '/b'] },
    });
    expect(grantToAdditionalPermissions(EMPTY_GRANT)).toEqual({});
  });
});
