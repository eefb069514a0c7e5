import type { ExecEnvPolicy } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { filterSnapshotEnv } from './snapshot-env.ts';

const policy = (overrides: Partial<ExecEnvPolicy>): ExecEnvPolicy => ({
  inherit: 'all',
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
  ...overrides,
});

describe('filterSnapshotEnv (ports of shell_snapshot_tests.rs)', () => {
  test('snapshot_filters_profile_exports_after_capture', () => {
    const captured = new Map([
      ['PROFILE_ALLOWED', 'profile'],
      ['PROFILE_DENIED', 'denied'],
      ['PROFILE_SECRET', 'secret'],
      ['PWD', '/tmp'],
    ]);
    const env = filterSnapshotEnv(captured, {
      policy: policy({
        exclude: ['PROFILE_DENIED'],
        set: { PROFILE_ALLOWED: 'override' },
        includeOnly: ['PROFILE_*'],
      }),
    });
    expect(env).toEqual({ PROFILE_ALLOWED: 'override' });
  });

  test.each(['none', 'core'] as const)(
    'snapshot_preserves_profile_exports_with_restrictive_inheritance (%s)',
    (inherit) => {
      const captured = new Map([
        ['PROFILE_ALLOWED', 'profile'],
        ['SDKROOT', '/sdk'],
        ['PROFILE_SECRET', 'secret'],
        ['PROFILE_DENIED', 'denied'],
      ]);
      const env = filterSnapshotEnv(captured, {
        policy: policy({ inherit, exclude: ['PROFILE_DENIED'] }),
      });
      expect(env).toEqual({ PROFILE_ALLOWED: 'profile', SDKROOT: '/sdk' });
    },
  );

  test('snapshot_caches_only_unmanaged_proxy_state', () => {
    const managed = new Map([
      ['PROFILE_ALLOWED', 'profile'],
      ['HTTP_PROXY', 'http://127.0.0.1:4321'],
      ['CODEX_NETWORK_PROXY_ACTIVE', '1'],
      ['NODE_USE_ENV_PROXY', '1'],
    ]);
    expect(filterSnapshotEnv(managed)).toEqual({ PROFILE_ALLOWED: 'profile' });
    const user = new Map([
      ['PROFILE_ALLOWED', 'profile'],
      ['HTTP_PROXY', 'http://user-proxy.example'],
    ]);
    expect(filterSnapshotEnv(user)).toEqual({
      PROFILE_ALLOWED: 'profile',
      HTTP_PROXY: 'http://user-proxy.example',
    });
  });

  test('a profile exporting credentials: the default excludes drop them, ignoreDefaultExcludes keeps them', () => {
    const credentials = {
      DB_PASSWORD: 'p',
      PGPASSWORD: 'p',
      DATABASE_URL: 'postgres://u:p@h/db',
      GITHUB_PAT: 'p',
      GOOGLE_APPLICATION_CREDENTIALS: '/c.json',
      NPM_CONFIG__AUTH: 'a',
      SITE_COOKIE: 'c',
      AWS_SESSION_EXPIRY: 's',
      SENTRY_DSN: 'd',
      HTPASSWD_LINE: 'h',
      OPENAI_API_KEY: 'k',
    };
    const captured = new Map([...Object.entries(credentials), ['PROFILE_ALLOWED', 'profile']]);
    expect(filterSnapshotEnv(captured, { policy: policy({}) })).toEqual({
      PROFILE_ALLOWED: 'profile',
    });
    expect(filterSnapshotEnv(captured, { policy: policy({ ignoreDefaultExcludes: true }) })).toEqual({
      ...credentials,
      PROFILE_ALLOWED: 'profile',
    });
  });

  test("defaultExcludes replaces the default credential patterns (a server's own list)", () => {
    const captured = new Map([
      ['PROFILE_ALLOWED', 'profile'],
      ['OPENAI_API_KEY', 'k'],
    ]);
    expect(filterSnapshotEnv(captured, { policy: policy({}), defaultExcludes: ['PROFILE_*'] })).toEqual({
      OPENAI_API_KEY: 'k',
    });
  });

  test('drops shell-owned and non-inheritable names (case-insensitively), keeps __proto__ out', () => {
    const captured = new Map([
      ['OLDPWD', '/'],
      ['SHLVL', '2'],
      ['_', '/usr/bin/env'],
      ['node_repl_auth_token', 'x'],
      ['OPENAI_IDENTITY_TOKEN_FILE', 'x'],
      ['__proto__', 'x'],
      ['KEPT', 'yes'],
    ]);
    const env = filterSnapshotEnv(captured);
    expect(env).toEqual({ KEPT: 'yes' });
    expect(Object.getPrototypeOf(env)).toBe(Object.prototype);
  });
});
