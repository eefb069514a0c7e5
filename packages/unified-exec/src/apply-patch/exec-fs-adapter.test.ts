import { expect, test } from 'vitest';
import { type ExecFileSystemLike, ExecFileSystemPatchAdapter } from './exec-fs-adapter.ts';

// An executor filesystem that records the options of each call and refuses sandboxed writes the
// way the contract says (`Read-only file system (os error 30)`).
function recordingFs(calls: Array<[string, unknown]>): ExecFileSystemLike {
  const refuseSandboxed = (name: string, options: unknown): void => {
    calls.push([name, options]);
    if ((options as { sandbox?: unknown } | undefined)?.sandbox !== undefined) {
      throw new Error('Read-only file system (os error 30)');
    }
  };
  return {
    readFile: async (_path, options) => {
      calls.push(['readFile', options]);
      throw new Error('No such file or directory (os error 2)');
    },
    writeFile: async (_path, _data, options) => refuseSandboxed('writeFile', options),
    createDirectory: async (_path, options) => refuseSandboxed('createDirectory', options),
    getMetadata: async () => ({ isFile: true, isDirectory: false }),
    remove: async (_path, options) => refuseSandboxed('remove', options),
  };
}

test('writes carry the sandbox, reads do not; os errors keep their text and errno name', async () => {
  const calls: Array<[string, unknown]> = [];
  const sandbox = { profile: 'workspace-write' as const, workspaceRoots: ['file:///w'] };
  const adapter = new ExecFileSystemPatchAdapter(recordingFs(calls), sandbox as never);
  await expect(adapter.readFile('/w/a')).rejects.toMatchObject({
    code: 'ENOENT',
    message: 'No such file or directory (os error 2)',
  });
  await expect(adapter.writeFile('/w/a', new Uint8Array())).rejects.toMatchObject({ code: 'EROFS' });
  await expect(adapter.remove('/w/a')).rejects.toMatchObject({ code: 'EROFS' });
  expect(calls).toEqual([
    ['readFile', undefined],
    ['writeFile', { sandbox }],
    ['remove', { sandbox, recursive: false, force: false }],
  ]);
  const unconfined = new ExecFileSystemPatchAdapter(recordingFs([]), undefined);
  await unconfined.writeFile('/w/a', new Uint8Array());
  expect(await unconfined.getMetadata('/w/a')).toEqual({ isFile: true, isDirectory: false });
});
