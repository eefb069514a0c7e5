// The methods Codex 0.169.0 calls besides process/* (fs/*, environmentConfig/read,
// environment/info, http/request), called with the same params on execd's server and on the
// original exec-server: each scenario's normalised transcripts must be equal (same result, or
// same error code and text). Paths of the per-server fixture folders, modification times and
// `Date` headers are masked. The transcripts are written to $TMPDIR/execd-compat-methods.json.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { type PeerServer, startPeerServer, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningExecServer, startExecServer } from '../../src/server/index.ts';
import type { RawWsClient } from '../helpers/raw-ws-client.ts';
import {
  buildFsFixture,
  codexSandbox,
  type FsFixture,
  type HttpOrigin,
  startHttpOrigin,
} from './method-fixtures.ts';
import { type Difference, diff, type Entry, Transcriber } from './transcript.ts';

/** What a scenario gets: its own fixture folder, the HTTP origin and the shared config folders. */
interface Context {
  readonly fs: FsFixture;
  readonly origin: string;
  readonly project: string;
  readonly badProject: string;
}
type Scenario = (t: Transcriber, c: RawWsClient, ctx: Context) => Promise<void>;

/**
 * What execd adds to `environment/info` on purpose (its own capabilities, see the README): left out of
 * the comparison, which is about the original's field set.
 */
const EXECD_INFO_EXTENSIONS: readonly string[] = [
  'resourceLimits',
  'containment',
  'processList',
  'processResize',
  'retentionGapReporting',
  'waitingForInput',
];

/** A variable both servers inherit, read by `http/request` headers with `valueEnvVar`. */
const HEADER_ENV_VAR = 'EXECD_COMPAT_HEADER_VALUE';

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** Waits for the notifications of `method` matching `match` and records them in order. */
async function recordNotifications(
  t: Transcriber,
  c: RawWsClient,
  method: string,
  done: (params: Record<string, unknown>[]) => boolean,
): Promise<void> {
  const of = () => c.notifications(method).map((n) => n.params as Record<string, unknown>);
  await waitFor(() => done(of()), { what: `${method} notifications`, timeoutMs: 15_000 }).catch(() => {});
  t.note(method, of());
}

const SCENARIOS: Record<string, Scenario> = {
  async 'fs/readFile: file, missing, bare path, FIFO, directory, symlink loop'(t, c, { fs }) {
    await t.call(c, 'fs/readFile', { path: fs.uri('file.txt') });
    await t.call(c, 'fs/readFile', { path: fs.uri('link') });
    await t.call(c, 'fs/readFile', { path: fs.uri('nope.txt') });
    await t.call(c, 'fs/readFile', { path: `${fs.root}/file.txt` });
    await t.call(c, 'fs/readFile', { path: fs.uri('fifo') });
    await t.call(c, 'fs/readFile', { path: fs.uri('dir') });
    await t.call(c, 'fs/readFile', { path: fs.uri('loop-a') });
    await t.call(c, 'fs/readFile', {});
  },

  async 'fs/writeFile then fs/readFile; missing parent; a directory'(t, c, { fs }) {
    await t.call(c, 'fs/writeFile', { path: fs.uri('written.txt'), dataBase64: b64('new\n') });
    await t.call(c, 'fs/readFile', { path: fs.uri('written.txt') });
    await t.call(c, 'fs/writeFile', { path: fs.uri('written.txt'), dataBase64: b64('') });
    await t.call(c, 'fs/readFile', { path: fs.uri('written.txt') });
    await t.call(c, 'fs/writeFile', { path: fs.uri('no-dir/x.txt'), dataBase64: b64('x') });
    await t.call(c, 'fs/writeFile', { path: fs.uri('dir'), dataBase64: b64('x') });
    await t.call(c, 'fs/writeFile', { path: fs.uri('bad.txt'), dataBase64: 'not base64!' });
  },

  async 'fs/getMetadata: file, directory, symlinks followed and not, missing'(t, c, { fs }) {
    await t.call(c, 'fs/getMetadata', { path: fs.uri('file.txt') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('dir') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('link') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('dir-link') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('link'), followSymlinks: false });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('file.txt'), followSymlinks: false });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('nope') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('fifo') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('loop-a') });
  },

  async 'fs/createDirectory, fs/readDirectory, fs/canonicalize'(t, c, { fs }) {
    await t.call(c, 'fs/createDirectory', { path: fs.uri('made/a/b'), recursive: true });
    await t.call(c, 'fs/createDirectory', { path: fs.uri('made2/a/b') });
    await t.call(c, 'fs/createDirectory', { path: fs.uri('made') });
    await t.call(c, 'fs/createDirectory', { path: fs.uri('made'), recursive: true });
    await t.call(c, 'fs/createDirectory', { path: fs.uri('file.txt'), recursive: true });
    await t.call(c, 'fs/readDirectory', { path: fs.uri('dir') });
    await t.call(c, 'fs/readDirectory', { path: fs.uri('dir-link') });
    await t.call(c, 'fs/readDirectory', { path: fs.uri('file.txt') });
    await t.call(c, 'fs/readDirectory', { path: fs.uri('nope') });
    await t.call(c, 'fs/canonicalize', { path: fs.uri('dir-link/../link') });
    await t.call(c, 'fs/canonicalize', { path: fs.uri('link') });
    await t.call(c, 'fs/canonicalize', { path: fs.uri('nope') });
    await t.call(c, 'fs/canonicalize', { path: fs.uri('loop-a') });
  },

  async 'fs/copy and fs/remove'(t, c, { fs }) {
    await t.call(c, 'fs/copy', { sourcePath: fs.uri('file.txt'), destinationPath: fs.uri('copy.txt') });
    await t.call(c, 'fs/copy', {
      sourcePath: fs.uri('file.txt'),
      destinationPath: fs.uri('copy.txt'),
      recursive: false,
    });
    await t.call(c, 'fs/readFile', { path: fs.uri('copy.txt') });
    await t.call(c, 'fs/copy', {
      sourcePath: fs.uri('dir'),
      destinationPath: fs.uri('dir-copy'),
      recursive: false,
    });
    await t.call(c, 'fs/copy', {
      sourcePath: fs.uri('dir'),
      destinationPath: fs.uri('dir-copy'),
      recursive: true,
    });
    await t.call(c, 'fs/readFile', { path: fs.uri('dir-copy/sub/deep.txt') });
    await t.call(c, 'fs/copy', { sourcePath: fs.uri('nope'), destinationPath: fs.uri('x'), recursive: true });
    await t.call(c, 'fs/copy', {
      sourcePath: fs.uri('link'),
      destinationPath: fs.uri('link-copy'),
      recursive: false,
    });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('link-copy'), followSymlinks: false });
    await t.call(c, 'fs/remove', { path: fs.uri('copy.txt') });
    await t.call(c, 'fs/remove', { path: fs.uri('copy.txt') });
    await t.call(c, 'fs/remove', { path: fs.uri('copy.txt'), force: true });
    await t.call(c, 'fs/remove', { path: fs.uri('dir-copy'), recursive: false });
    await t.call(c, 'fs/remove', { path: fs.uri('dir-copy'), recursive: true });
    await t.call(c, 'fs/remove', { path: fs.uri('dir-link') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('dir/inner.txt') });
  },

  async 'fs/walk: limits and required options'(t, c, { fs }) {
    const options = { maxDepth: 5, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false };
    await t.call(c, 'fs/walk', { path: fs.uri('dir'), options: {} });
    await t.call(c, 'fs/walk', { path: fs.uri('dir'), options: { maxDepth: 1 } });
    await t.call(c, 'fs/walk', { path: fs.uri('dir'), options });
    await t.call(c, 'fs/walk', { path: fs.uri('dir'), options: { ...options, maxDepth: 0 } });
    await t.call(c, 'fs/walk', { path: fs.uri('dir'), options: { ...options, maxEntries: 1 } });
    await t.call(c, 'fs/walk', { path: fs.uri('nope'), options });
  },

  async 'fs/open, fs/readBlock, fs/close: handles'(t, c, { fs }) {
    await t.call(c, 'fs/open', { path: fs.uri('file.txt'), handleId: 'h1' });
    await t.call(c, 'fs/open', { path: fs.uri('file.txt'), handleId: 'h1' });
    await t.call(c, 'fs/readBlock', { handleId: 'h1', offset: 0, len: 3 });
    await t.call(c, 'fs/readBlock', { handleId: 'h1', offset: 3, len: 100 });
    await t.call(c, 'fs/readBlock', { handleId: 'h1', offset: 100, len: 10 });
    await t.call(c, 'fs/close', { handleId: 'h1' });
    await t.call(c, 'fs/close', { handleId: 'h1' });
    await t.call(c, 'fs/readBlock', { handleId: 'h1', offset: 0, len: 3 });
    await t.call(c, 'fs/open', { path: fs.uri('nope'), handleId: 'h2' });
    await t.call(c, 'fs/open', { path: fs.uri('fifo'), handleId: 'h3' });
    await t.call(c, 'fs/open', { path: fs.uri('file.txt'), handleId: 'x'.repeat(64) });
  },

  async 'fs/watchMissing: a missing path appears'(t, c, { fs }) {
    await t.call(c, 'fs/watchMissing', { watchId: 7, missing: [fs.uri('appears.txt')], present: null });
    await t.call(c, 'fs/writeFile', { path: fs.uri('appears.txt'), dataBase64: b64('here') });
    await recordNotifications(t, c, 'fs/missingChanged', (list) => list.length > 0);
  },

  async 'fs/* with the sandbox Codex sends: inside, outside, through a symlink'(t, c, { fs }) {
    const open = codexSandbox(fs, { tmp: true });
    const closed = codexSandbox(fs, { tmp: false });
    await t.call(c, 'fs/writeFile', { path: fs.uri('ws/in.txt'), dataBase64: b64('in'), sandbox: closed });
    await t.call(c, 'fs/writeFile', {
      path: fs.uri('outside/out.txt'),
      dataBase64: b64('x'),
      sandbox: closed,
    });
    await t.call(c, 'fs/writeFile', {
      path: fs.uri('ws/escape/via-link.txt'),
      dataBase64: b64('x'),
      sandbox: closed,
    });
    await t.call(c, 'fs/writeFile', {
      path: fs.uri('ws/.git/config'),
      dataBase64: b64('x'),
      sandbox: closed,
    });
    await t.call(c, 'fs/writeFile', {
      path: fs.uri('outside/tmp-ok.txt'),
      dataBase64: b64('x'),
      sandbox: open,
    });
    await t.call(c, 'fs/readFile', { path: fs.uri('file.txt'), sandbox: closed });
    await t.call(c, 'fs/createDirectory', { path: fs.uri('outside/d'), recursive: true, sandbox: closed });
    await t.call(c, 'fs/remove', { path: fs.uri('file.txt'), sandbox: closed });
    await t.call(c, 'fs/copy', {
      sourcePath: fs.uri('file.txt'),
      destinationPath: fs.uri('outside/c.txt'),
      recursive: false,
      sandbox: closed,
    });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('outside/out.txt') });
    await t.call(c, 'fs/getMetadata', { path: fs.uri('outside/tmp-ok.txt') });
  },

  async 'environment/info: the field set (besides execd extensions)'(t, c) {
    const reply = await c.response(c.request('environment/info', {}));
    const info = (reply.result ?? {}) as Record<string, unknown>;
    const own = (key: string) => !EXECD_INFO_EXTENSIONS.includes(key);
    t.note('keys', Object.keys(info).filter(own).sort());
    t.note(
      'capability keys',
      Object.keys((info.capabilities ?? {}) as object)
        .filter(own)
        .sort(),
    );
    t.note(
      'types',
      Object.fromEntries(
        Object.entries(info)
          .filter(([key]) => own(key))
          .map(([key, value]) => [key, typeof value]),
      ),
    );
    t.note('values', {
      shell: info.shell,
      platformOs: info.platformOs,
      userHomeDir: info.userHomeDir,
      prependPathDirs: Array.isArray(info.prependPathDirs),
    });
  },

  async 'environmentConfig/read: user and project layers, a malformed file'(t, c, { project, badProject }) {
    const paths = { configPaths: [['mcp_servers']], requirementsPaths: [['mcp_servers']] };
    await t.call(c, 'environmentConfig/read', { cwd: pathToFileUri(project), ...paths });
    await t.call(c, 'environmentConfig/read', {
      cwd: pathToFileUri(project),
      configPaths: [],
      requirementsPaths: [],
    });
    await t.call(c, 'environmentConfig/read', { cwd: pathToFileUri(badProject), ...paths });
    await t.call(c, 'environmentConfig/read', { cwd: pathToFileUri(`${project}/missing`), ...paths });
    await t.call(c, 'environmentConfig/read', { cwd: project, ...paths });
    await t.call(c, 'environmentConfig/read', {});
  },

  async 'http/request: methods, headers, redirects, errors, a streamed body'(t, c, { origin }) {
    const base = { headers: [], requestId: 'r' };
    await t.call(c, 'http/request', { ...base, method: 'GET', url: `${origin}/echo?q=1`, requestId: 'r1' });
    await t.call(c, 'http/request', {
      method: 'POST',
      url: `${origin}/echo`,
      headers: [{ name: 'x-k', value: 'v1' }],
      bodyBase64: b64('payload'),
      requestId: 'r2',
    });
    await t.call(c, 'http/request', {
      method: 'GET',
      url: `${origin}/echo`,
      headers: [{ name: 'x-k', value: '', valueEnvVar: HEADER_ENV_VAR }],
      requestId: 'r3',
    });
    await t.call(c, 'http/request', { ...base, method: 'GET', url: `${origin}/redirect`, requestId: 'r4' });
    await t.call(c, 'http/request', {
      ...base,
      method: 'GET',
      url: `${origin}/redirect`,
      redirectPolicy: 'stop',
      requestId: 'r5',
    });
    await t.call(c, 'http/request', { ...base, method: 'GET', url: `${origin}/missing`, requestId: 'r6' });
    await t.call(c, 'http/request', { ...base, method: 'GET', url: 'not a url', requestId: 'r7' });
    await t.call(c, 'http/request', { ...base, method: 'GET', url: 'http://127.0.0.1:1/', requestId: 'r8' });
    await t.call(c, 'http/request', { method: 'GET', url: `${origin}/echo` });
    await t.call(c, 'http/request', {
      ...base,
      method: 'BREW COFFEE',
      url: `${origin}/echo`,
      requestId: 'r9',
    });
    await t.call(c, 'http/request', {
      ...base,
      method: 'GET',
      url: `${origin}/big`,
      requestId: 'stream-1',
      streamResponse: true,
    });
    // How the body is cut into deltas is the network's business: record the sum.
    const deltas = () =>
      c.notifications('http/request/bodyDelta').map((n) => n.params as Record<string, unknown>);
    await waitFor(() => deltas().some((p) => p.done === true), {
      what: 'the last body delta',
      timeoutMs: 15_000,
    }).catch(() => {});
    const list = deltas();
    t.note('http/request/bodyDelta', {
      requestIds: [...new Set(list.map((p) => p.requestId))],
      seqsFromOne: list.every((p, index) => p.seq === index + 1),
      bytes: list.reduce((sum, p) => sum + Buffer.from(String(p.deltaBase64), 'base64').length, 0),
      doneOnlyLast: list.findIndex((p) => p.done === true) === list.length - 1,
      errors: list.map((p) => p.error).filter((error) => error !== null && error !== undefined),
    });
  },
};

/** Masks what differs between two servers for a legitimate reason. */
function mask(entries: Entry[], fs: FsFixture, shared: readonly [string, string][]): unknown {
  let text = JSON.stringify(entries).split(fs.root).join('<ROOT>');
  for (const [literal, label] of shared) text = text.split(literal).join(label);
  return JSON.parse(text, (key, value: unknown) => {
    // Times differ by fixture; whether one is 0 (unknown) does not.
    if ((key === 'modifiedAtMs' || key === 'createdAtMs') && typeof value === 'number' && value > 0)
      return '<ms>';
    if (typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'date') {
      return { name: 'date', value: '<date>' };
    }
    if (key === 'entries' && Array.isArray(value)) {
      // Directory order is the file system's, not protocol.
      return [...value].sort((a, b) =>
        String((a as { fileName?: string }).fileName).localeCompare(
          String((b as { fileName?: string }).fileName),
        ),
      );
    }
    return value;
  }) as unknown;
}

let execd: RunningExecServer;
let original: PeerServer;
let origin: HttpOrigin;
let configRoot: string;
let savedEnv: Record<string, string | undefined> = {};
const results: Record<string, { execd: unknown; original: unknown }> = {};

beforeAll(async () => {
  // One CODEX_HOME with a user config for both servers; a project with its own layer and a
  // project whose config is malformed.
  configRoot = realpathSync(mkdtempSync(join(tmpdir(), 'execd-compat-config-')));
  const codexHome = join(configRoot, 'codex-home');
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'config.toml'), '[mcp_servers.user]\ncommand = "echo"\nargs = ["user"]\n');
  for (const [name, toml] of [
    ['project', '[mcp_servers.project]\ncommand = "echo"\n'],
    ['bad-project', '[mcp_servers\ncommand = \n'],
  ] as const) {
    mkdirSync(join(configRoot, name, '.git'), { recursive: true });
    mkdirSync(join(configRoot, name, '.codex'));
    writeFileSync(join(configRoot, name, '.codex/config.toml'), toml);
  }
  // Set for the whole file: execd's server runs in this process and may read them per request.
  const env = { CODEX_HOME: codexHome, [HEADER_ENV_VAR]: 'from-env' };
  savedEnv = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  execd = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  original = await startPeerServer({ env });
  origin = await startHttpOrigin();
});

afterAll(async () => {
  await execd?.close();
  await original?.close();
  await origin?.[Symbol.asyncDispose]();
  if (configRoot) rmSync(configRoot, { recursive: true, force: true });
  for (const [key, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  const out = join(tmpdir(), 'execd-compat-methods.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`method transcripts written to ${out}`);
});

async function record(url: string, scenario: Scenario): Promise<unknown> {
  const fs = buildFsFixture();
  try {
    await using t = new Transcriber(url);
    const c = await t.session();
    const ctx: Context = {
      fs,
      origin: origin.url,
      project: join(configRoot, 'project'),
      badProject: join(configRoot, 'bad-project'),
    };
    await scenario(t, c, ctx);
    return mask(t.entries, fs, [
      [origin.url, '<ORIGIN>'],
      [configRoot, '<CONFIG>'],
    ]);
  } finally {
    rmSync(fs.root, { recursive: true, force: true });
  }
}

describe('methods beyond process/*: execd vs the original exec-server', () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    test(name, async () => {
      const ours = await record(execd.url, scenario);
      const theirs = await record(original.url, scenario);
      results[name] = { execd: ours, original: theirs };
      expect(diff(name, ours, theirs)).toEqual(KNOWN_DIFFERENCES.filter((d) => d.scenario === name));
    });
  }
});

/** Observed against Codex CLI 0.169.0; a new or changed difference fails its scenario. */
const KNOWN_DIFFERENCES: Difference[] = [];
