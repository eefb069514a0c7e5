import type { ExecEnvPolicy } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { createEnv } from './create-env.ts';
import { compileEnvPattern } from './env-pattern.ts';

const policy = (overrides: Partial<ExecEnvPolicy> = {}): ExecEnvPolicy => ({
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
  ...overrides,
});

const BASE = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  Lang: 'C.UTF-8',
  OPENAI_API_KEY: 'sk-1',
  aws_secret_access_key: 'x',
  GITHUB_TOKEN: 'ghp',
  DB_PASSWORD: 'pw',
  PGPASSWORD: 'pw',
  DATABASE_URL: 'postgres://u:pw@h/db',
  GITHUB_PAT: 'pat',
  AWS_CREDENTIALS: 'c',
  NPM_CONFIG__AUTH: 'a',
  session_cookie: 'c',
  SENTRY_DSN: 'd',
  MY_VAR: 'mine',
  OTHER: 'other',
  UNSET: undefined,
};

describe('compileEnvPattern', () => {
  test('matches * and ? case-insensitively, everything else literally', () => {
    expect(compileEnvPattern('*key*').matches('OPENAI_API_KEY')).toBe(true);
    expect(compileEnvPattern('MY_?AR').matches('my_var')).toBe(true);
    expect(compileEnvPattern('MY_?AR').matches('MY_VVAR')).toBe(false);
    expect(compileEnvPattern('A.B').matches('AXB')).toBe(false);
    expect(compileEnvPattern('A.B').matches('a.b')).toBe(true);
    expect(compileEnvPattern('(x)[y]').matches('(X)[Y]')).toBe(true);
    expect(compileEnvPattern('*').matches('')).toBe(true);
    expect(compileEnvPattern('PATH').matches('PATHX')).toBe(false);
  });
});

describe('createEnv', () => {
  test('inherit all drops the default credential patterns', () => {
    expect(createEnv(policy(), BASE)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      Lang: 'C.UTF-8',
      MY_VAR: 'mine',
      OTHER: 'other',
    });
  });

  test('the default excludes keep the non-secret names they would catch (git identity, ssh agent, session plumbing)', () => {
    const base = {
      GIT_AUTHOR_NAME: 'A',
      git_author_email: 'a@x',
      SSH_AUTH_SOCK: '/run/agent',
      XDG_SESSION_ID: '3',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/bus',
      AWS_SESSION_TOKEN: 's',
      GIT_ASKPASS_AUTH: 'x',
    };
    expect(createEnv(policy(), base)).toEqual({
      GIT_AUTHOR_NAME: 'A',
      git_author_email: 'a@x',
      SSH_AUTH_SOCK: '/run/agent',
      XDG_SESSION_ID: '3',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/bus',
    });
    // A policy's own exclude still removes them.
    expect(createEnv(policy({ exclude: ['SSH_AUTH_SOCK'] }), base).SSH_AUTH_SOCK).toBeUndefined();
  });

  test('ignoreDefaultExcludes keeps credentials', () => {
    const env = createEnv(policy({ ignoreDefaultExcludes: true }), BASE);
    expect(env.OPENAI_API_KEY).toBe('sk-1');
    expect(env.aws_secret_access_key).toBe('x');
    expect(env.GITHUB_TOKEN).toBe('ghp');
    expect(env.DATABASE_URL).toBe('postgres://u:pw@h/db');
    expect(env.session_cookie).toBe('c');
  });

  test('defaultExcludes replaces the default list; [] keeps everything', () => {
    const env = createEnv(policy(), BASE, { defaultExcludes: ['*PAT', 'MY_*'] });
    expect(env.GITHUB_PAT).toBeUndefined();
    expect(env.MY_VAR).toBeUndefined();
    expect(env.DB_PASSWORD).toBe('pw');
    expect(createEnv(policy(), BASE, { defaultExcludes: [] })).toEqual(
      createEnv(policy({ ignoreDefaultExcludes: true }), BASE),
    );
  });

  test('inherit core keeps only the core names, case-insensitively', () => {
    expect(createEnv(policy({ inherit: 'core' }), BASE)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
      Lang: 'C.UTF-8',
    });
  });

  test('inherit none starts empty; set still applies', () => {
    expect(createEnv(policy({ inherit: 'none', set: { A: '1' } }), BASE)).toEqual({ A: '1' });
  });

  test('exclude, then set, then includeOnly (which filters set values too)', () => {
    const env = createEnv(
      policy({ exclude: ['my_*'], set: { MY_SET: 's', KEEP_ME: 'k' }, includeOnly: ['my_*', 'PATH'] }),
      BASE,
    );
    expect(env).toEqual({ PATH: '/usr/bin:/bin', MY_SET: 's' });
  });

  test('set can re-add an excluded name; default excludes do not touch set values', () => {
    const env = createEnv(policy({ exclude: ['OTHER'], set: { OTHER: 'again', SERVICE_TOKEN: 't' } }), BASE);
    expect(env.OTHER).toBe('again');
    expect(env.SERVICE_TOKEN).toBe('t');
  });

  test('threadId is exported after includeOnly', () => {
    const env = createEnv(policy({ includeOnly: ['PATH'] }), BASE, { threadId: 't-1' });
    expect(env).toEqual({ PATH: '/usr/bin:/bin', CODEX_THREAD_ID: 't-1' });
  });

  test('non-inheritable names are removed whatever the policy, in any case', () => {
    const env = createEnv(
      policy({
        ignoreDefaultExcludes: true,
        set: {
          codex_exec_server_noise_auth_token: 'a',
          NODE_REPL_AUTH_TOKEN: 'b',
          OPENAI_FEDERATION_RULE_ID: 'c',
        },
      }),
      { OPENAI_IDENTITY_TOKEN_FILE: '/f', Openai_Workload_Identity_Context: 'x', KEEP: '1' },
    );
    expect(env).toEqual({ KEEP: '1' });
  });
});
