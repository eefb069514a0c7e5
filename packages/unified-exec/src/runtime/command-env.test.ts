import { describe, expect, test } from 'vitest';
import { buildCommandEnv, RUNTIME_ENV_VARS } from './command-env.ts';

const base = {
  HOME: '/home/u',
  PATH: '/usr/bin:/bin',
  OPENAI_API_KEY: 'sk-secret',
  CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: 'noise',
  LANG: 'en_US.UTF-8',
};

describe('buildCommandEnv', () => {
  test('policy env + ids + unified-exec variables; credentials and non-inheritable names dropped', () => {
    const { env } = buildCommandEnv(
      { inherit: 'all', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] },
      { baseEnv: base, threadId: 'thread-1', sessionId: 'session-1' },
    );
    expect(env).toEqual({
      HOME: '/home/u',
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      TERM: 'dumb',
      LC_CTYPE: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      COLORTERM: '',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GH_PAGER: 'cat',
      CODEX_CI: '1',
      CODEX_THREAD_ID: 'thread-1',
      CODEX_SESSION_ID: 'session-1',
    });
  });

  test('the exec-server overlay keeps only what differs from the policy result here', () => {
    const { execServerOverlay, execServerPolicy } = buildCommandEnv(
      {
        inherit: 'all',
        ignoreDefaultExcludes: true,
        exclude: ['DROP_*'],
        set: { FROM_SET: 'x', CODEX_PERMISSION_PROFILE: 'forged', NODE_REPL_AUTH_TOKEN: 't' },
        includeOnly: [],
      },
      { baseEnv: base, threadId: 'thread-1' },
    );
    // HOME, PATH equal to the policy result: dropped; LANG changed and the injected ones: kept.
    expect(execServerOverlay).not.toHaveProperty('HOME');
    expect(execServerOverlay).not.toHaveProperty('PATH');
    expect(execServerOverlay).not.toHaveProperty('FROM_SET');
    expect(execServerOverlay).not.toHaveProperty('NODE_REPL_AUTH_TOKEN');
    expect(execServerOverlay).toMatchObject({ LANG: 'C.UTF-8', CODEX_THREAD_ID: 'thread-1', PAGER: 'cat' });
    expect(execServerPolicy.exclude).toEqual(['DROP_*', ...RUNTIME_ENV_VARS]);
    expect(execServerPolicy.set).toEqual({ FROM_SET: 'x' });
  });
});
