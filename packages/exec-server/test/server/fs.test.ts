// The `fs/*` methods over a real WebSocket against a real server and real files (spec §2.4a).
// Error texts are part of the wire contract with Codex 0.169.0 (probed live), so these tests
// check them as well as the codes.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const uri = (path: string): string => pathToFileURL(path).href;
const b64 = (text: string): string => Buffer.from(text).toString('base64');

let server: TestServer;
let root: string;

beforeAll(async () => {
  server = await startTestServer();
  root = mkdtempSync(join(tmpdir(), 'execd-fs-'));
});

afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

async function connect(codec: 'json' | 'msgpack' = 'json'): Promise<RawWsClient> {
  const client = await RawWsClient.connect(server.url, { codec });
  await client.initialize();
  return client;
}

/** The error of a call, as `{code, message}` with the JSON-RPC number. */
async function failure(
  client: RawWsClient,
  method: string,
  params: unknown,
): Promise<{ code: number; message: string }> {
  return client.errorOf(client.request(method, params)) as Promise<{ code: number; message: string }>;
}

function fixture(name: string): string {
  const dir = join(root, name);
  execFileSync('mkdir', ['-p', join(dir, 'sub')]);
  writeFileSync(join(dir, 'a.txt'), 'hello\n');
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  symlinkSync(join(dir, 'a.txt'), join(dir, 'link'));
  symlinkSync(join(dir, 'loop1'), join(dir, 'loop2'));
  symlinkSync(join(dir, 'loop2'), join(dir, 'loop1'));
  return dir;
}

function bytesOf(value: unknown): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.from(value as Uint8Array);
}

describe.each(['json', 'msgpack'] as const)('%s codec', (codec) => {
  test('a write of megabytes round-trips; megabytes of bad base64 are refused as a short one', async () => {
    await using client = await connect(codec);
    const dir = fixture(`big-${codec}`);
    const data = new Uint8Array(3 * 1024 * 1024 + 1).map((_, i) => (i * 7) & 0xff);
    const dataBase64 = codec === 'json' ? Buffer.from(data).toString('base64') : data;
    expect(await client.call('fs/writeFile', { path: uri(join(dir, 'big')), dataBase64 })).toEqual({});
    expect(Buffer.compare(readFileSync(join(dir, 'big')), data)).toBe(0);
    if (codec === 'msgpack') return;
    const bad = `${Buffer.from(data).toString('base64').slice(0, -4)}QR==`;
    const refused = await failure(client, 'fs/writeFile', { path: uri(join(dir, 'big')), dataBase64: bad });
    expect(refused.code).toBe(-32600);
    expect(refused.message).toMatch(/^fs\/writeFile requires valid base64 dataBase64: /);
    expect(Buffer.compare(readFileSync(join(dir, 'big')), data)).toBe(0);
  });

  test('writeFile then readFile round-trips bytes (base64 on JSON, bin on msgpack)', async () => {
    await using client = await connect(codec);
    const dir = fixture(`rw-${codec}`);
    const data = new Uint8Array(300).map((_, i) => i % 256);
    const dataBase64 = codec === 'json' ? Buffer.from(data).toString('base64') : data;
    expect(await client.call('fs/writeFile', { path: uri(join(dir, 'bin')), dataBase64 })).toEqual({});
    const { dataBase64: read } = await client.call<{ dataBase64: unknown }>('fs/readFile', {
      path: uri(join(dir, 'bin')),
      sandbox: null,
    });
    if (codec === 'msgpack') expect(read).toBeInstanceOf(Uint8Array);
    expect([...bytesOf(read)]).toEqual([...data]);
  });
});

describe('paths and errors', () => {
  test('a bare path, another scheme, a query, a remote host', async () => {
    await using client = await connect();
    expect(await failure(client, 'fs/readFile', { path: '/etc/hostname' })).toEqual({
      code: -32602,
      message: 'invalid URI: relative URL without a base',
    });
    expect(await failure(client, 'fs/getMetadata', { path: 'http://x/tmp' })).toEqual({
      code: -32602,
      message: 'unsupported path URI scheme `http`',
    });
    expect((await failure(client, 'fs/getMetadata', { path: 'file:///tmp?x=1' })).code).toBe(-32602);
    expect(await failure(client, 'fs/getMetadata', { path: 'file://other/tmp' })).toEqual({
      code: -32600,
      message: "'file://other/tmp' is invalid on 'linux'",
    });
  });

  test('missing, FIFO (without hanging), directory, symlink loop', async () => {
    await using client = await connect();
    const dir = fixture('errors');
    expect(await failure(client, 'fs/readFile', { path: uri(join(dir, 'nope')) })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
    for (const name of ['fifo', 'sub'])
      expect(await failure(client, 'fs/readFile', { path: uri(join(dir, name)) })).toEqual({
        code: -32600,
        message: `path \`${join(dir, name)}\` is not a file`,
      });
    expect(
      await failure(client, 'fs/writeFile', { path: uri(join(dir, 'fifo')), dataBase64: b64('x') }),
    ).toEqual({
      code: -32600,
      message: `path \`${join(dir, 'fifo')}\` is not a file`,
    });
    expect(await failure(client, 'fs/readFile', { path: uri(join(dir, 'loop1')) })).toEqual({
      code: -32603,
      message: 'Symbolic link loop (os error 40)',
    });
    expect(await failure(client, 'fs/writeFile', { path: uri(join(dir, 'w')), dataBase64: 'aGk' })).toEqual({
      code: -32600,
      message: 'fs/writeFile requires valid base64 dataBase64: Invalid padding',
    });
  });

  test('getMetadata follows symlinks by default; followSymlinks false refuses them', async () => {
    await using client = await connect();
    const dir = fixture('metadata');
    const followed = await client.call('fs/getMetadata', { path: uri(join(dir, 'link')) });
    expect(followed).toMatchObject({
      isFile: true,
      isDirectory: false,
      isSymlink: true,
      size: 6,
      createdAtMs: 0,
    });
    expect(
      await failure(client, 'fs/getMetadata', { path: uri(join(dir, 'link')), followSymlinks: false }),
    ).toEqual({
      code: -32600,
      message: 'path contains a symbolic link',
    });
    const plain = await client.call<{ createdAtMs: number }>('fs/getMetadata', {
      path: uri(join(dir, 'a.txt')),
      followSymlinks: false,
    });
    expect(plain.createdAtMs).toBeGreaterThan(0);
    expect(await failure(client, 'fs/getMetadata', { path: uri(join(dir, 'a.txt', 'x')) })).toEqual({
      code: -32603,
      message: 'Not a directory (os error 20)',
    });
    // A plain file or folder answers from one lstat; a dangling link fails as following it does.
    expect(await client.call('fs/getMetadata', { path: uri(dir) })).toMatchObject({
      isDirectory: true,
      isSymlink: false,
    });
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    expect(await failure(client, 'fs/getMetadata', { path: uri(join(dir, 'dangling')) })).toEqual({
      code: -32004,
      message: 'No such file or directory (os error 2)',
    });
  });
});

describe('followSymlinks: false', () => {
  test('no symlink anywhere on the path, with the original errors', async () => {
    await using client = await connect();
    const dir = fixture('nofollow');
    symlinkSync(join(dir, 'sub'), join(dir, 'sublink'));
    const loop = { code: -32603, message: 'Symbolic link loop (os error 40)' };
    const notDir = { code: -32603, message: 'Not a directory (os error 20)' };
    expect(
      await failure(client, 'fs/readFile', { path: uri(join(dir, 'link')), followSymlinks: false }),
    ).toEqual(loop);
    expect(
      await failure(client, 'fs/writeFile', {
        path: uri(join(dir, 'link')),
        dataBase64: b64('x'),
        followSymlinks: false,
      }),
    ).toEqual(loop);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('hello\n');
    expect(
      await failure(client, 'fs/writeFile', {
        path: uri(join(dir, 'sublink', 'x')),
        dataBase64: b64('x'),
        followSymlinks: false,
      }),
    ).toEqual(notDir);
    expect(
      await failure(client, 'fs/createDirectory', {
        path: uri(join(dir, 'sublink', 'n')),
        followSymlinks: false,
      }),
    ).toEqual(notDir);
    expect(
      await failure(client, 'fs/readFile', { path: uri(join(dir, 'fifo')), followSymlinks: false }),
    ).toEqual({
      code: -32600,
      message: 'path is not a regular file',
    });
    expect(
      await failure(client, 'fs/remove', { path: uri(join(dir, 'sub')), followSymlinks: false }),
    ).toEqual({
      code: -32603,
      message: 'recursive no-follow removal is unsupported',
    });
    expect(
      await failure(client, 'fs/remove', {
        path: uri(join(dir, 'link')),
        recursive: false,
        followSymlinks: false,
      }),
    ).toEqual({ code: -32600, message: 'path contains a symbolic link' });
    expect(
      await client.call('fs/remove', {
        path: uri(join(dir, 'a.txt')),
        recursive: false,
        followSymlinks: false,
      }),
    ).toEqual({});
  });
});

describe('directories', () => {
  test('createDirectory, readDirectory, canonicalize, copy, remove', async () => {
    await using client = await connect();
    const dir = fixture('dirs');
    expect(await client.call('fs/createDirectory', { path: uri(join(dir, 'c', 'x', 'y')) })).toEqual({});
    expect(
      await failure(client, 'fs/createDirectory', { path: uri(join(dir, 'c')), recursive: false }),
    ).toEqual({
      code: -32603,
      message: 'File exists (os error 17)',
    });
    const { entries } = await client.call<{ entries: { fileName: string }[] }>('fs/readDirectory', {
      path: uri(dir),
    });
    // Entries that cannot be stat'ed (the symlink loop) are left out, as the original does.
    expect(entries.map((entry) => entry.fileName).sort()).toEqual(['a.txt', 'c', 'fifo', 'link', 'sub']);
    expect(await client.call('fs/canonicalize', { path: uri(join(dir, 'link')) })).toEqual({
      path: uri(join(dir, 'a.txt')),
    });
    const copy = await failure(client, 'fs/copy', { sourcePath: uri(dir), destinationPath: uri(`${dir}2`) });
    expect(copy.code).toBe(-32602);
    expect(copy.message).toContain('missing field `recursive`');
    expect(
      await failure(client, 'fs/copy', {
        sourcePath: uri(dir),
        destinationPath: uri(join(dir, 'sub', 'in')),
        recursive: true,
      }),
    ).toEqual({
      code: -32600,
      message: 'fs/copy cannot copy a directory to itself or one of its descendants',
    });
    expect(
      await client.call('fs/copy', {
        sourcePath: uri(dir),
        destinationPath: uri(`${dir}2`),
        recursive: true,
      }),
    ).toEqual({});
    // The FIFO inside is skipped, the symlinks are copied as links.
    expect(readdirSync(`${dir}2`).sort()).toEqual(['a.txt', 'c', 'link', 'loop1', 'loop2', 'sub']);
    expect(await client.call('fs/remove', { path: uri(`${dir}2`) })).toEqual({});
    expect(await client.call('fs/remove', { path: uri(`${dir}2`) })).toEqual({});
    expect((await failure(client, 'fs/remove', { path: uri(`${dir}2`), force: false })).code).toBe(-32004);
  });

  test('walk: breadth first, sorted, bounded, with the original limits', async () => {
    await using client = await connect();
    const dir = join(root, 'walk');
    await mkdir(join(dir, 'x', 'y'), { recursive: true });
    writeFileSync(join(dir, 'f1'), '1');
    writeFileSync(join(dir, 'x', 'f2'), '2');
    symlinkSync(join(dir, 'x'), join(dir, 'dlink'));
    const options = { maxDepth: 8, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false };
    const walked = await client.call<{ entries: { path: string; kind: string }[]; truncated: boolean }>(
      'fs/walk',
      {
        path: uri(dir),
        options,
      },
    );
    expect(walked.entries).toEqual([
      { path: uri(join(dir, 'f1')), kind: 'file' },
      { path: uri(join(dir, 'x')), kind: 'directory' },
      { path: uri(join(dir, 'x', 'f2')), kind: 'file' },
      { path: uri(join(dir, 'x', 'y')), kind: 'directory' },
    ]);
    // Every entry counts, listed or not (the skipped symlink `dlink` is the first).
    const bounded = await client.call<{ entries: unknown[]; truncated: boolean }>('fs/walk', {
      path: uri(dir),
      options: { ...options, maxEntries: 2 },
    });
    expect(bounded).toEqual({
      entries: [{ path: uri(join(dir, 'f1')), kind: 'file' }],
      errors: [],
      truncated: true,
    });
    expect(
      await failure(client, 'fs/walk', { path: uri(dir), options: { ...options, maxEntries: 0 } }),
    ).toEqual({
      code: -32600,
      message: 'filesystem walk limits must be greater than zero',
    });
    expect(
      await failure(client, 'fs/walk', { path: uri(dir), options: { ...options, maxDepth: 65 } }),
    ).toEqual({
      code: -32600,
      message: 'filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000',
    });
  });
});

describe('handles', () => {
  test('open, readBlock, close; duplicate, unknown and oversized ids; block length', async () => {
    await using client = await connect();
    const dir = fixture('handles');
    expect(await client.call('fs/open', { path: uri(join(dir, 'a.txt')), handleId: 'h1' })).toEqual({
      handleId: 'h1',
    });
    expect(await failure(client, 'fs/open', { path: uri(join(dir, 'a.txt')), handleId: 'h1' })).toEqual({
      code: -32600,
      message: 'file handle `h1` already exists',
    });
    expect(await client.call('fs/readBlock', { handleId: 'h1', offset: 1, len: 100 })).toEqual({
      chunk: b64('ello\n'),
      eof: true,
    });
    expect(await failure(client, 'fs/readBlock', { handleId: 'h1', offset: 0, len: 0 })).toEqual({
      code: -32600,
      message: 'file read block length must be between 1 and 1048576',
    });
    expect(await client.call('fs/close', { handleId: 'h1' })).toEqual({});
    expect(await failure(client, 'fs/readBlock', { handleId: 'h1', offset: 0, len: 1 })).toEqual({
      code: -32004,
      message: 'unknown file handle `h1`',
    });
    expect(
      await failure(client, 'fs/open', { path: uri(join(dir, 'a.txt')), handleId: 'x'.repeat(33) }),
    ).toEqual({
      code: -32600,
      message: 'file handle ID must not exceed 32 bytes',
    });
    expect(await failure(client, 'fs/open', { path: uri(join(dir, 'fifo')), handleId: 'f' })).toEqual({
      code: -32600,
      message: `path \`${join(dir, 'fifo')}\` is not a file`,
    });
  });

  test('replace + writeBlock writes positionally', async () => {
    await using client = await connect();
    const file = join(fixture('replace'), 'out.bin');
    await client.call('fs/open', { path: uri(file), handleId: 'w', mode: 'replace' });
    await client.call('fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('hello') });
    await client.call('fs/writeBlock', { handleId: 'w', offset: 7, chunk: b64('!') });
    await client.call('fs/close', { handleId: 'w' });
    expect(readFileSync(file)).toEqual(Buffer.from('hello\0\0!'));
  });

  test('a flood of opens stops at 128 per connection; the connection going away closes them', async () => {
    const fds = (): number => readdirSync('/proc/self/fd').length;
    const before = fds();
    const dir = fixture('flood');
    const client = await connect();
    const answers = await Promise.all(
      Array.from({ length: 140 }, (_, i) =>
        client.response(client.request('fs/open', { path: uri(join(dir, 'a.txt')), handleId: `h${i}` })),
      ),
    );
    const refused = answers.filter((answer) => 'error' in answer);
    expect(answers.length - refused.length).toBe(128);
    expect(refused[0]).toMatchObject({
      error: { code: -32600, message: 'at most 128 file handles may be open per connection' },
    });
    expect(fds()).toBeGreaterThanOrEqual(before + 128);
    await client.close();
    await waitFor(() => fds() <= before + 2, { what: 'the handles to be closed' });
  });

  test('a 64 MiB file streams through readBlock; readFile carries up to the original limit', async () => {
    await using client = await connect('msgpack');
    const file = join(root, 'big.bin');
    const data = Buffer.alloc(64 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i);
    writeFileSync(file, data);
    await client.call('fs/open', { path: uri(file), handleId: 'big' });
    const hash = createHash('sha256');
    let offset = 0;
    for (;;) {
      const { chunk, eof } = await client.call<{ chunk: Uint8Array; eof: boolean }>('fs/readBlock', {
        handleId: 'big',
        offset,
        len: 1024 * 1024,
      });
      hash.update(chunk);
      offset += chunk.length;
      if (eof) break;
    }
    expect(offset).toBe(data.length);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    // One fs/readFile carries files up to the original's limit (this client's frames stop at 64 MiB).
    truncateSync(file, 40 * 1024 * 1024);
    const whole = await client.call<{ dataBase64: Uint8Array }>('fs/readFile', { path: uri(file) });
    expect(Buffer.compare(Buffer.from(whole.dataBase64), data.subarray(0, 40 * 1024 * 1024))).toBe(0);
    truncateSync(file, 600 * 1024 * 1024);
    expect(await failure(client, 'fs/readFile', { path: uri(file) })).toEqual({
      code: -32600,
      message: 'file is too large to read: limit is 536870912 bytes',
    });
    rmSync(file);
  });
});

describe('sandbox', () => {
  const sandbox = (workspace: string, access: 'read' | 'write') => ({
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
          { path: { type: 'special', value: { kind: 'project_roots' } }, access },
        ],
      },
      network: 'restricted',
    },
    cwd: uri(workspace),
    policyContext: { cwd: uri(workspace), workspaceRoots: [uri(workspace)] },
    workspaceRoots: [uri(workspace)],
    userHomeDir: uri(tmpdir()),
    windowsSandboxLevel: 'disabled',
    useLegacyLandlock: false,
  });

  test('writes are allowed in the workspace, refused outside and through a symlink pointing outside', async () => {
    await using client = await connect();
    const base = join(root, 'sandbox');
    const workspace = join(base, 'ws');
    const outside = join(base, 'out');
    await mkdir(workspace, { recursive: true });
    await mkdir(outside, { recursive: true });
    writeFileSync(join(outside, 's.txt'), 'secret');
    symlinkSync(join(outside, 's.txt'), join(workspace, 'escape'));
    const write = sandbox(workspace, 'write');
    expect(
      await client.call('fs/writeFile', {
        path: uri(join(workspace, 'ok.txt')),
        dataBase64: b64('hi'),
        sandbox: write,
      }),
    ).toEqual({});
    expect(readFileSync(join(workspace, 'ok.txt'), 'utf8')).toBe('hi');
    const rofs = { code: -32603, message: 'Read-only file system (os error 30)' };
    expect(
      await failure(client, 'fs/writeFile', {
        path: uri(join(outside, 'x.txt')),
        dataBase64: b64('x'),
        sandbox: write,
      }),
    ).toEqual(rofs);
    expect(
      await failure(client, 'fs/writeFile', {
        path: uri(join(workspace, 'escape')),
        dataBase64: b64('x'),
        sandbox: write,
      }),
    ).toEqual(rofs);
    expect(readFileSync(join(outside, 's.txt'), 'utf8')).toBe('secret');
    expect(
      await failure(client, 'fs/writeFile', {
        path: uri(join(workspace, 'ok.txt')),
        dataBase64: b64('x'),
        sandbox: sandbox(workspace, 'read'),
      }),
    ).toEqual(rofs);
    expect(
      await failure(client, 'fs/open', {
        path: uri(join(outside, 'w')),
        handleId: 'w',
        mode: 'replace',
        sandbox: write,
      }),
    ).toEqual(rofs);
    expect(await client.call('fs/readFile', { path: uri(join(outside, 's.txt')), sandbox: write })).toEqual({
      dataBase64: b64('secret'),
    });
  });
});

describe('watchMissing', () => {
  test('fires fs/missingChanged once when a missing path appears', async () => {
    await using client = await connect();
    const dir = join(root, 'watch');
    await mkdir(join(dir, '.git'), { recursive: true });
    const missing = [uri(join(dir, '.agents', 'skills')), uri(join(dir, 'AGENTS.md'))];
    expect(
      await client.call('fs/watchMissing', { watchId: 1, missing, present: uri(join(dir, '.git')) }),
    ).toEqual({
      watching: true,
    });
    writeFileSync(join(dir, 'unrelated'), '');
    writeFileSync(join(dir, 'AGENTS.md'), '');
    await waitFor(() => client.notifications('fs/missingChanged').length > 0, { what: 'fs/missingChanged' });
    expect(client.notifications('fs/missingChanged')).toEqual([
      { method: 'fs/missingChanged', params: { watchId: 1 } },
    ]);
    // Nothing to watch: a "missing" path that exists.
    expect(await client.call('fs/watchMissing', { watchId: 2, missing })).toEqual({ watching: false });
  });

  test('a newer watch replaces the connection watch', async () => {
    await using client = await connect();
    const dir = join(root, 'watch2');
    await mkdir(dir, { recursive: true });
    await client.call('fs/watchMissing', { watchId: 1, missing: [uri(join(dir, 'a'))] });
    await client.call('fs/watchMissing', { watchId: 2, missing: [uri(join(dir, 'b'))] });
    writeFileSync(join(dir, 'a'), '');
    writeFileSync(join(dir, 'b'), '');
    await waitFor(() => client.notifications('fs/missingChanged').length > 0, { what: 'fs/missingChanged' });
    expect(client.notifications('fs/missingChanged')).toEqual([
      { method: 'fs/missingChanged', params: { watchId: 2 } },
    ]);
  });
});

test('fs methods need the handshake first', async () => {
  await using client = await RawWsClient.connect(server.url);
  expect(await failure(client, 'fs/readFile', { path: uri('/etc/hostname') })).toEqual({
    code: -32600,
    message: 'client must call initialize before using filesystem methods',
  });
});
