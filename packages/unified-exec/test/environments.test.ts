// Several environments behind one manager: exec-server Environments (local and remote, held by
// an EnvironmentManager) adapted with execEnvironmentFrom, chosen by `environment_id`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvironmentManager, LocalEnvironment, RemoteEnvironment } from '@execd/exec-server';
import { startExecServer } from '@execd/exec-server/server';
import { expect, test } from 'vitest';
import { execEnvironmentFrom, UnifiedExecProcessManager, UnifiedExecTools } from '../src/index.ts';
import { childPids, pidsMatching, uniqueMarker } from './helpers/processes.ts';
import { parseToolText } from './helpers/tool-text.ts';
import { waitFor } from './helpers/wait-for.ts';

test('environment_id picks the environment; closing everything reaps both sides', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'uexec-envs-'));
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const environments = new EnvironmentManager();
  environments.add(new LocalEnvironment());
  environments.add(await RemoteEnvironment.connect('devbox', { url: server.url }));
  const common = {
    cwd: dir,
    shell: '/bin/bash',
    permissionProfile: 'danger-full-access' as const,
    allowLoginShell: false,
  };
  const local = await execEnvironmentFrom(environments.require('local'), common);
  const remote = await execEnvironmentFrom(environments.require('devbox'), common);
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
    await local.close();
    await remote.close();
    await environments.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  await waitFor(() => pidsMatching(marker).length === 0, { what: 'the remote session to be reaped' });
  expect(childPids()).toEqual([]);
});
