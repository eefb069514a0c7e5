import { describe, expect, test } from 'vitest';
import { dropLauncherEnv, LAUNCHER_ENV_VAR, launcherEnv } from './launcher-env.ts';

describe('launcher environment', () => {
  test('a launcher sets the malloc threshold and names it, unless malloc is tuned already', () => {
    expect(launcherEnv({})).toEqual({
      MALLOC_MMAP_THRESHOLD_: '131072',
      [LAUNCHER_ENV_VAR]: 'MALLOC_MMAP_THRESHOLD_',
    });
    expect(launcherEnv({ MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({});
    expect(launcherEnv({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1' })).toEqual({});
    expect(launcherEnv({ GLIBC_TUNABLES: 'glibc.rtld.nns=4' })).toHaveProperty('MALLOC_MMAP_THRESHOLD_');
  });

  test('the server drops what the launcher named, and only its own tunables', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin', ...launcherEnv({}) };
    dropLauncherEnv(env);
    expect(env).toEqual({ PATH: '/bin' });
    // A user's own setting (no marker) is theirs to pass on.
    const own: NodeJS.ProcessEnv = { MALLOC_MMAP_THRESHOLD_: '65536' };
    dropLauncherEnv(own);
    expect(own).toEqual({ MALLOC_MMAP_THRESHOLD_: '65536' });
    // The marker cannot remove anything else.
    const odd: NodeJS.ProcessEnv = { PATH: '/bin', HOME: '/h', [LAUNCHER_ENV_VAR]: 'PATH,HOME' };
    dropLauncherEnv(odd);
    expect(odd).toEqual({ PATH: '/bin', HOME: '/h' });
  });
});
