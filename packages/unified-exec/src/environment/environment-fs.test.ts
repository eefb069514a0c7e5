// `Environment.fs`: the same ExecFileSystem API on this host (LocalFileSystem) and through a
// real exec-server on 127.0.0.1:0 (RemoteFileSystem over `fs/*`), on both codecs.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { ExecError, type SandboxParam } from '@execd/protocol';
import { readFileChunks } from '@execd/protocol/contract';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Environment } from './environment.ts';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'execd-env-fs-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The code of what `promise` rejected with. */
async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return ExecError.is(error) ? error.code : `not an ExecError: ${String(error)}`;
  }
  return undefined;
}

type Kind = 'local' | 'remote json' | 'remote msgpack';

async function withEnvironment(kind: Kind, run: (env: Environment) => Promise<void>): Promise<void> {
  if (kind === 'local') {
    await using env = Environment.local();
    await run(env);
    return;
  }
  await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  await using env = await Environment.connect({
    url: server.url,
    client: { codec: kind === 'remote json' ? 'json' : 'msgpack' },
  });
  await run(env);
}

describe.each(['local', 'remote json', 'remote msgpack'] as const)('%s environment', (kind) => {
  test('read, write, metadata, listing, walk, copy, remove', () =>
    withEnvironment(kind, async (env) => {
      const dir = join(root, kind.replace(' ', '-'));
      await env.fs.createDirectory(join(dir, 'sub'));
      const data = new Uint8Array([0, 1, 2, 255]);
      await env.fs.writeFile(join(dir, 'a.bin'), data);
      expect([...(await env.fs.readFile(join(dir, 'a.bin')))]).toEqual([...data]);
      expect(await env.fs.getMetadata(join(dir, 'a.bin'))).toMatchObject({ isFile: true, size: 4 });
      symlinkSync(join(dir, 'a.bin'), join(dir, 'link'));
      expect(await env.fs.canonicalize(join(dir, 'link'))).toBe(join(dir, 'a.bin'));
      expect((await env.fs.readDirectory(dir)).map((entry) => entry.fileName).sort()).toEqual([
        'a.bin',
        'link',
        'sub',
      ]);
      const walked = await env.fs.walk(dir, {
        maxDepth: 4,
        maxDirectories: 10,
        maxEntries: 10,
        followDirectorySymlinks: false,
      });
      expect(walked.entries).toEqual([
        { path: join(dir, 'a.bin'), kind: 'file' },
        { path: join(dir, 'sub'), kind: 'directory' },
      ]);
      await env.fs.copy(join(dir, 'a.bin'), join(dir, 'sub', 'b.bin'), { recursive: false });
      expect([...readFileSync(join(dir, 'sub', 'b.bin'))]).toEqual([...data]);
      await env.fs.remove(join(dir, 'sub'));
      expect(await codeOf(env.fs.getMetadata(join(dir, 'sub')))).toBe('notFound');
      expect(await codeOf(env.fs.readFile(join(dir, 'sub')))).toBe('notFound');
      expect(await codeOf(env.fs.getMetadata(join(dir, 'link'), { followSymlinks: false }))).toBe(
        'invalidRequest',
      );
    }));

  test('open streams a file in blocks; replace writes one', () =>
    withEnvironment(kind, async (env) => {
      const dir = join(root, `${kind.replace(' ', '-')}-stream`);
      await mkdir(dir, { recursive: true });
      const big = Buffer.alloc(3 * 1024 * 1024 + 5, 7);
      writeFileSync(join(dir, 'big'), big);
      let total = 0;
      for await (const chunk of readFileChunks(env.fs, join(dir, 'big'))) total += chunk.length;
      expect(total).toBe(big.length);
      await using out = await env.fs.open(join(dir, 'out'), { mode: 'replace' });
      await out.write(0, new TextEncoder().encode('abc'));
      await out.close();
      expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('abc');
    }));

  test('a sandbox refuses writes outside the workspace', () =>
    withEnvironment(kind, async (env) => {
      const workspace = join(root, `${kind.replace(' ', '-')}-ws`);
      await mkdir(workspace, { recursive: true });
      const sandbox: SandboxParam = {
        profile: 'workspace-write',
        workspaceRoots: [`file://${workspace}`],
        excludeSlashTmp: true,
        excludeTmpdirEnvVar: true,
      };
      await env.fs.writeFile(join(workspace, 'ok'), new Uint8Array([1]), { sandbox });
      expect(await codeOf(env.fs.writeFile(join(root, 'outside'), new Uint8Array([1]), { sandbox }))).toBe(
        'internal',
      );
    }));

  test('watchMissing ends with changed when a path appears', () =>
    withEnvironment(kind, async (env) => {
      const dir = join(root, `${kind.replace(' ', '-')}-watch`);
      await mkdir(dir, { recursive: true });
      const watch = await env.fs.watchMissing([join(dir, 'AGENTS.md')]);
      expect(watch.watching).toBe(true);
      writeFileSync(join(dir, 'AGENTS.md'), '');
      expect(await watch.ended).toBe('changed');
      const closed = await env.fs.watchMissing([join(dir, 'other')]);
      await closed.close();
      expect(await closed.ended).toBe('closed');
    }));
});
