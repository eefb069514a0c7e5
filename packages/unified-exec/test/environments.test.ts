// Several environments behind one manager (local and remote, held by an EnvironmentManager),
// chosen by `environment_id`.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import {
  expectNoLeaks,
  parseToolText,
  pidsMatching,
  takeLeakBaseline,
  uniqueMarker,
  waitFor,
} from '@execd/test-kit';
import { expect, test } from 'vitest';
import {
  Environment,
  EnvironmentManager,
  UnifiedExecProcessManager,
  UnifiedExecTools,
} from '../src/index.ts';

test('environment_id picks the environment; closing everything reaps both sides', async () => {
  const baseline = takeLeakBaseline();
  const dir = await mkdtemp(join(tmpdir(), 'uexec-envs-'));
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const environments = new EnvironmentManager();
  const common = {
    cwd: dir,
    shell: '/bin/bash',
    permissionProfile: 'danger-full-access' as const,
    allowLoginShell: false,
  };
  const local = environments.add(Environment.local(common));
  const remote = environments.add(await Environment.connect({ id: 'devbox', url: server.url, ...common }));
  const manager = new UnifiedExecProcessManager({ processIds: 'deterministic' });
  const tools = new UnifiedExecTools({ manager, environments: [local, remote] });
  const marker = uniqueMarker();
  try {
    expect(tools.specs()[0]?.parameters.properties).toHaveProperty('environment_id');
    expect([local.isRemote, remote.isRemote, remote.id]).toEqual([false, true, 'devbox']);
    const here = await tools.execCommand({ cmd: 'echo "here $PWD"' });
    expect(parseToolText(here.text)).toMatchObject({ exitCode: 0, output: `here ${dir}\n` });
    const there = await tools.execCommand({
      cmd: `sleep 600; : ${marker}`,
      environment_id: 'devbox',
      yield_time_ms: 250,
    });
    expect(parseToolText(there.text).sessionId).toBe(1000);
    expect(manager.listProcesses()).toEqual([
      expect.objectContaining({ environmentId: 'devbox', processId: 1000 }),
    ]);
    const unknown = await tools.execCommand({ cmd: 'true', environment_id: 'nowhere' });
    expect(unknown.text).toBe('unknown turn environment id `nowhere`');
  } finally {
    await manager.close();
    await environments.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  await waitFor(() => pidsMatching(marker).length === 0, { what: 'the remote session to be reaped' });
  await expectNoLeaks(baseline, { scope: 'closing every environment' });
});

test('apply_patch: `*** Environment ID:` picks the environment the patch is applied in', async () => {
  const here = await mkdtemp(join(tmpdir(), 'uexec-envs-here-'));
  const there = await mkdtemp(join(tmpdir(), 'uexec-envs-there-'));
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const common = { shell: '/bin/bash', permissionProfile: 'danger-full-access' as const };
  const local = Environment.local({ ...common, cwd: here });
  const remote = await Environment.connect({ ...common, id: 'devbox', url: server.url, cwd: there });
  const manager = new UnifiedExecProcessManager({ approvalPolicy: 'never' });
  const tools = new UnifiedExecTools({ manager, environments: [local, remote] });
  const patch = (id: string | undefined, file: string) =>
    `*** Begin Patch\n${id === undefined ? '' : `*** Environment ID: ${id}\n`}*** Add File: ${file}\n+x\n*** End Patch`;
  try {
    expect((await tools.applyPatch(patch('devbox', 'remote.txt'))).text).toContain('A remote.txt');
    expect((await tools.applyPatch(patch(undefined, 'default.txt'))).text).toContain('A default.txt');
    expect((await tools.applyPatch(patch('local', 'local.txt'))).text).toContain('A local.txt');
    expect(await readdir(there)).toEqual(['remote.txt']);
    expect((await readdir(here)).sort()).toEqual(['default.txt', 'local.txt']);
    expect(await tools.applyPatch(patch('nowhere', 'x.txt'))).toEqual({
      success: false,
      text: 'unknown turn environment id `nowhere`',
    });
  } finally {
    await manager.close();
    await local.close();
    await remote.close();
    await server.close();
    await rm(here, { recursive: true, force: true });
    await rm(there, { recursive: true, force: true });
  }
});
