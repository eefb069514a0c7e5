// Default credential excludes (security review): real children started through a real server and
// through the in-process LocalBackend, with credential-shaped variables in the executor's
// environment, print their own environment; the names must be missing unless the policy opts out.

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecEnvPolicy, type ExecParams, fromUtf8, pathToFileUri } from '@execd/protocol';
import { DEFAULT_EXCLUDE_PATTERNS } from '@execd/pty-utils';
import { ProcessTracker } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { LocalBackend, type LocalExecProcess } from '../../src/local/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

/** The names the review found passing the old `*KEY*`/`*SECRET*`/`*TOKEN*` defaults, and more. */
const CREDENTIALS: Readonly<Record<string, string>> = {
  DB_PASSWORD: 'pw',
  PGPASSWORD: 'pw',
  DATABASE_URL: 'postgres://u:pw@db/app',
  GITHUB_PAT: 'ghp_x',
  AWS_SHARED_CREDENTIALS: 'c',
  GOOGLE_APPLICATION_CREDENTIALS: '/creds.json',
  NPM_CONFIG__AUTH: 'auth',
  SITE_COOKIE: 'cookie',
  MY_SESSION_ID: 'session',
  SENTRY_DSN: 'https://k@sentry/1',
  HTPASSWD: 'x',
  OPENAI_API_KEY: 'sk',
  CLIENT_SECRET: 's',
  GITHUB_TOKEN: 't',
};
const EXECUTOR_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', KEEP_ME: 'kept', ...CREDENTIALS };
const CWD = pathToFileUri(tmpdir());
const tracker = new ProcessTracker();

function policy(overrides: Partial<ExecEnvPolicy> = {}): ExecEnvPolicy {
  return {
    inherit: 'all',
    ignoreDefaultExcludes: false,
    exclude: [],
    set: {},
    includeOnly: [],
    ...overrides,
  };
}

/** `NAME=value` lines of `env` output, as a record. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

function credentialNamesIn(env: Record<string, string>): string[] {
  return Object.keys(CREDENTIALS).filter((name) => Object.hasOwn(env, name));
}

async function envThroughServer(envPolicy: ExecEnvPolicy): Promise<Record<string, string>> {
  await using server = await startTestServer({ processTable: { executorEnv: EXECUTOR_ENV } });
  await using client = await RawWsClient.connect(server.url);
  await client.initialize();
  await client.call('process/start', {
    processId: 'env',
    argv: ['env'],
    cwd: CWD,
    env: {},
    envPolicy,
    tty: false,
    pipeStdin: false,
    arg0: null,
  });
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{ chunks: { chunk: string }[]; nextSeq: number; closed: boolean }>(
      'process/read',
      { processId: 'env', afterSeq, maxBytes: null, waitMs: 2_000 },
    );
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString('utf8');
    afterSeq = read.nextSeq - 1;
    if (read.closed) return parseEnv(text);
  }
}

async function readToEnd(proc: LocalExecProcess): Promise<string> {
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await proc.read({ afterSeq, waitMs: 2_000 });
    text += fromUtf8(Buffer.concat(read.chunks.map((chunk) => chunk.chunk)));
    afterSeq = read.nextSeq - 1;
    if (read.closed) return text;
  }
}

async function envThroughBackend(
  params: Partial<ExecParams>,
  options: ConstructorParameters<typeof LocalBackend>[0] = {},
): Promise<Record<string, string>> {
  await using backend = new LocalBackend({ executorEnv: EXECUTOR_ENV, ...options });
  const proc = await backend.start({
    processId: 'env',
    argv: ['env'],
    cwd: CWD,
    env: {},
    tty: false,
    pipeStdin: false,
    enforceManagedNetwork: false,
    ...params,
  });
  tracker.track(backend.table);
  return parseEnv(await readToEnd(proc));
}

describe('default credential excludes reach real children', () => {
  test('through the server: inherit all drops every credential name, keeps the rest', async () => {
    const env = await envThroughServer(policy());
    expect(credentialNamesIn(env)).toEqual([]);
    expect(env.KEEP_ME).toBe('kept');
  });

  test('through the server: ignoreDefaultExcludes (the documented opt-out) passes them', async () => {
    const env = await envThroughServer(policy({ ignoreDefaultExcludes: true }));
    expect(credentialNamesIn(env)).toEqual(Object.keys(CREDENTIALS));
    expect(env.DATABASE_URL).toBe(CREDENTIALS.DATABASE_URL);
  });

  test('through the LocalBackend: dropped by default, passed with ignoreDefaultExcludes', async () => {
    expect(credentialNamesIn(await envThroughBackend({ envPolicy: policy() }))).toEqual([]);
    const optedOut = await envThroughBackend({ envPolicy: policy({ ignoreDefaultExcludes: true }) });
    expect(credentialNamesIn(optedOut)).toEqual(Object.keys(CREDENTIALS));
  });

  test('defaultEnvExcludes replaces the list for every policy of the table', async () => {
    const env = await envThroughBackend(
      { envPolicy: policy() },
      { defaultEnvExcludes: [...DEFAULT_EXCLUDE_PATTERNS.filter((p) => p !== '*_PAT'), 'KEEP_*'] },
    );
    expect(credentialNamesIn(env)).toEqual(['GITHUB_PAT']);
    expect(env.KEEP_ME).toBeUndefined();
  });

  test.skipIf(!existsSync('/bin/bash'))(
    "a shell snapshot's captured environment loses the same names (the profile exported them)",
    async () => {
      const home = await mkdtemp(join(tmpdir(), 'execd-env-snapshot-'));
      try {
        const exports = Object.entries(CREDENTIALS).map(([name, value]) => `export ${name}='${value}'`);
        await writeFile(join(home, '.bash_profile'), `${exports.join('\n')}\nexport FROM_PROFILE=yes\n`);
        const run = async (ignoreDefaultExcludes: boolean): Promise<Record<string, string>> =>
          envThroughBackend(
            {
              argv: ['/bin/bash', '-lc', 'shopt -q login_shell && echo LOGIN_SHELL=yes; env'],
              cwd: pathToFileUri(home),
              envPolicy: policy({ inherit: 'none', ignoreDefaultExcludes }),
              env: { PATH: EXECUTOR_ENV.PATH, HOME: home },
              shellSnapshot: { scopeId: 'env', shell: { name: 'bash', path: '/bin/bash' } },
            },
            { executorEnv: {} },
          );
        const filtered = await run(false);
        // Restored from the snapshot (`bash -pc`), not a login shell that ran the profile again.
        expect(filtered.LOGIN_SHELL).toBeUndefined();
        expect(filtered.FROM_PROFILE).toBe('yes');
        expect(filtered.__CODEX_SHELL_SNAPSHOT_STATE_0).toBeUndefined();
        expect(credentialNamesIn(filtered)).toEqual([]);
        const optedOut = await run(true);
        expect(optedOut.LOGIN_SHELL).toBeUndefined();
        expect(credentialNamesIn(optedOut)).toEqual(Object.keys(CREDENTIALS));
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },
  );
});
