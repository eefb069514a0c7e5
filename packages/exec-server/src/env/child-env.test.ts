import type { ExecEnvPolicy } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { childEnv } from './child-env.ts';

/** Inherit everything, with the default excludes and nothing else. */
const INHERIT_ALL: ExecEnvPolicy = {
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
};

/** The executor's own environment (what `process.env` would be). */
const EXECUTOR_ENV = { PATH: '/usr/bin:/bin', HOME: '/home/u', GITHUB_TOKEN: 'ghp', MY_VAR: 'mine' };

describe('childEnv', () => {
  test('without a policy the request env is used verbatim', () => {
    const env = { PATH: '/bin', CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE: '1', GITHUB_TOKEN: 't' };
    expect(childEnv({ env, envPolicy: undefined }, EXECUTOR_ENV)).toEqual(env);
  });

  test('applies the policy over the executor env, then the overlay wins, then drops forbidden names', () => {
    const env = childEnv(
      {
        envPolicy: { ...INHERIT_ALL, inherit: 'none', set: { FROM_SET: 'set', SHARED: 'set' } },
        env: {
          SHARED: 'overlay',
          OVERLAY_TOKEN: 'kept: the overlay is not filtered by default excludes',
          CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE: '1',
          Node_Repl_Auth_Token: 'dropped',
        },
      },
      { EXECUTOR: 'not inherited' },
    );
    expect(env).toEqual({
      FROM_SET: 'set',
      SHARED: 'overlay',
      OVERLAY_TOKEN: 'kept: the overlay is not filtered by default excludes',
    });
  });

  test('inherit all reads the executor environment, not the request', () => {
    const env = childEnv({ envPolicy: INHERIT_ALL, env: {} }, { EXECUTOR: 'yes', MY_KEY: 'no' });
    expect(env).toEqual({ EXECUTOR: 'yes' });
  });
});
