// process/start with the sandbox exactly as Codex 0.169.0 sends it (the original's
// `FileSystemSandboxContext`, from a captured workspace-write session), through a real server,
// under real bubblewrap: attack from inside, check from outside.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri, RpcError } from '@execd/protocol';
import { ProcessTracker } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const tracker = new ProcessTracker();
const SECRET = 'codex-form-secret-5150';

const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});

const WORKSPACE_WRITE = [
  { path: special('root'), access: 'read' },
  { path: special('project_roots'), access: 'write' },
  { path: special('slash_tmp'), access: 'write' },
  { path: special('tmpdir'), access: 'write' },
  ...['.git', '.agents', '.codex', '.aws'].map((name) => ({
    path: special('project_roots', name),
    access: 'read',
    missing_path_behavior: 'skip',
  })),
];
const READ_ONLY = [{ path: special('root'), access: 'read' }];

/** A process/start as Codex 0.169.0 sends it (field for field), running `script` in `ws`. */
function codexStart(processId: string, ws: string, script: string, entries: unknown[], extra = {}) {
  return {
    processId,
    metadata: { threadId: 't', toolCallId: processId },
    argv: ['/bin/bash', '-lc', script],
    cwd: pathToFileUri(ws),
    envPolicy: {
      inherit: 'all',
      ignoreDefaultExcludes: true,
      exclude: ['CODEX_PERMISSION_PROFILE', 'CODEX_VERSION'],
      set: {},
      includeOnly: [],
    },
    env: { LC_ALL: 'C.UTF-8', CODEX_SANDBOX_NETWORK_DISABLED: '1', TERM: 'dumb' },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox: {
      permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
      cwd: pathToFileUri(ws),
      workspaceRoots: [pathToFileUri(ws)],
      windowsSandboxLevel: 'disabled',
      windowsSandboxProxySettingsMode: 'reconcile',
      useLegacyLandlock: false,
      ...extra,
    },
    enforceManagedNetwork: false,
    managedNetwork: null,
  };
}

async function runToEnd(client: RawWsClient, params: ReturnType<typeof codexStart>) {
  const started = await client.call<{ sandboxType: unknown }>('process/start', params);
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
  let afterSeq = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{
      chunks: { chunk: string }[];
      nextSeq: number;
      closed: boolean;
      exitCode: number | null;
      sandboxDenied: boolean;
    }>('process/read', { processId: params.processId, afterSeq, maxBytes: null, waitMs: 2_000 });
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString('utf8');
    afterSeq = read.nextSeq - 1;
    if (read.closed)
      return {
        text,
        sandboxType: started.sandboxType,
        exitCode: read.exitCode,
        sandboxDenied: read.sandboxDenied,
      };
  }
}

let base: string;
let ws: string;
let outside: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execd-codex-sbx-')));
  ws = join(base, 'work');
  mkdirSync(join(ws, '.git'), { recursive: true });
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(ws, 'AGENTS.md'), '# agents\n');
  outside = realpathSync(mkdtempSync(join('/srv', 'execd-codex-out-')));
  symlinkSync(outside, join(ws, 'escape'));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe.skipIf(process.platform !== 'linux')("Codex 0.169.0's sandbox form on process/start", () => {
  test('workspace-write: the workspace is writable; /etc, .git, .codex and a link out are not', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const etc = join('/etc', `execd-codex-${process.pid}`);
    const script = [
      'echo hi > hello.txt',
      `touch ${etc}`,
      'echo x >> .git/HEAD',
      'mkdir .codex',
      'echo x > escape/planted',
      'cat AGENTS.md',
    ].join('; ');
    const result = await runToEnd(client, codexStart('ww', ws, script, WORKSPACE_WRITE));
    expect(result.sandboxType).toBe('linuxSeccomp');
    expect(result.text).toContain('# agents');
    expect(readFileSync(join(ws, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(existsSync(etc)).toBe(false);
    expect(readFileSync(join(ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(result.text).toMatch(/Read-only file system/);
  });

  test('read-only: nothing can be written, and a failed write is reported as a denial', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const inTmp = join(tmpdir(), `execd-codex-ro-${process.pid}`);
    const result = await runToEnd(
      client,
      codexStart('ro', ws, `cat AGENTS.md; touch ${inTmp}; touch new.txt`, READ_ONLY),
    );
    expect(result.sandboxType).toBe('linuxSeccomp');
    expect(result.text).toContain('# agents');
    expect(existsSync(inTmp)).toBe(false);
    expect(existsSync(join(ws, 'new.txt'))).toBe(false);
    expect(result.exitCode).not.toBe(0);
    expect(result.sandboxDenied).toBe(true);
  });

  test('deny entries and the default credential-store denial hold through the server', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const home = join(base, 'home');
    mkdirSync(join(home, '.aws'), { recursive: true });
    writeFileSync(join(home, '.aws', 'credentials'), SECRET);
    writeFileSync(join(ws, 'token.env'), SECRET);
    const entries = [
      ...WORKSPACE_WRITE,
      { path: { type: 'glob_pattern', pattern: '*.env' }, access: 'deny' },
    ];
    const script = `cat token.env; cp token.env copy; cat ${home}/.aws/credentials; echo end`;
    const result = await runToEnd(
      client,
      codexStart('deny', ws, script, entries, { userHomeDir: pathToFileUri(home) }),
    );
    expect(result.text).toContain('end');
    expect(result.text).not.toContain(SECRET);
    expect(result.text).toMatch(/token\.env: Permission denied/);
    expect(result.text).toMatch(/credentials: Permission denied/);
    expect(existsSync(join(ws, 'copy'))).toBe(false);
  });

  test('an unknown special kind is -32602 naming the field; the server keeps serving', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const bad = codexStart('bad', ws, 'true', [
      ...WORKSPACE_WRITE,
      { path: special('home'), access: 'read' },
    ]);
    const error = await client.call('process/start', bad).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe('invalidParams');
    expect((error as RpcError).message).toContain(
      'sandbox.permissions.file_system.entries.8.path.value.kind',
    );
    const ok = await runToEnd(client, codexStart('ok', ws, 'echo ok', WORKSPACE_WRITE));
    expect(ok.text).toMatch(/^ok$/m); // a login shell may print its own startup noise first
  });
});
