// Several environments behind one manager (local and remote, held by an EnvironmentManager),
// chosen by `environment_id`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExecServer } from '@execd/exec-server/server';
import { expectNoLeaks, takeLeakBaseline, waitFor } from '@execd/test-kit';
import { expect, test } from 'vitest';
import {
  Environment,
  EnvironmentManager,
  UnifiedExecProcessManager,
  UnifiedExecTools,
} from '../src/index.ts';
import { pidsMatching, uniqueMarker } from './helpers/processes.ts';
import { parseToolText } from './helpers/tool-text.ts';

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
