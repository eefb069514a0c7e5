import { pathToFileUri } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { Environment } from '../environment/environment.ts';
import { sandboxContextFor, writableWorkspaceRoots } from './launch.ts';

describe('sandboxContextFor', () => {
  test('always names the workspace roots: the environment cwd by default, never left to the command cwd', async () => {
    await using environment = Environment.local({ cwd: '/work/ws', permissionProfile: 'workspace-write' });
    expect(writableWorkspaceRoots(environment)).toEqual(['/work/ws']);
    expect(sandboxContextFor(environment)).toMatchObject({
      profile: 'workspace-write',
      workspaceRoots: [pathToFileUri('/work/ws')],
      writableRoots: undefined,
    });
  });

  test('configured roots (resolved against the cwd) replace the default', async () => {
    await using environment = Environment.local({ cwd: '/work/ws', workspaceRoots: ['.', '../lib'] });
    expect(sandboxContextFor(environment).workspaceRoots).toEqual([
      pathToFileUri('/work/ws'),
      pathToFileUri('/work/lib'),
    ]);
  });
});
