// Environments, local and remote (a real exec-server on 127.0.0.1:0), and the manager.

import { startExecServer } from '@execd/exec-server/server';
import { ExecError } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { execParams, readUntil, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { Environment } from './environment.ts';
import { EnvironmentManager } from './environment-manager.ts';

async function pidOf(env: Environment, id: string): Promise<number> {
  const proc = await env.backend.start(execParams(id, ['sh', '-c', 'printf "%s\\n" "$$"; exec sleep 60']));
  const { text } = await readUntil(proc, { until: (o) => o.text.endsWith('\n') });
  return Number(text.trim());
}

describe('environments', () => {
  test('remote_environment_fetches_info_from_exec_server: remote info equals local info', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    await using local = Environment.local();
    await using remote = await Environment.connect({ id: 'devbox', url: server.url });
    const [localInfo, remoteInfo] = await Promise.all([local.info(), remote.info()]);
    expect(remoteInfo).toEqual(localInfo);
    expect(await remote.info()).toBe(await remote.info());
    expect(await remote.status()).toEqual({ status: 'ready' });
    expect(await local.status()).toEqual({ status: 'ready' });
    expect([local.id, local.isRemote, remote.id, remote.isRemote]).toEqual(['local', false, 'devbox', true]);
    // The agent side's defaults come from the executor: its cwd and shell.
    expect(remote.settings.cwd).toBe(local.settings.cwd);
  });

  test('the manager holds environments by id and closes them all', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    const manager = new EnvironmentManager();
    const local = manager.add(Environment.local());
    const remote = manager.add(
      await Environment.connect({ id: 'devbox', url: server.url, client: { codec: 'json' } }),
    );
    expect(manager.ids).toEqual(['local', 'devbox']);
    expect(manager.default).toBe(local);
    manager.setDefault('devbox');
    expect(manager.default).toBe(remote);
    expect(manager.get('nope')).toBeUndefined();
    const missing = (() => {
      try {
        manager.require('nope');
      } catch (error) {
        return error;
      }
    })();
    expect(ExecError.is(missing) && missing.code).toBe('notFound');
    const duplicate = (() => {
      try {
        manager.add(Environment.local());
      } catch (error) {
        return error;
      }
    })();
    expect(ExecError.is(duplicate) && duplicate.code).toBe('invalidParams');

    const pids = [await pidOf(local, 'a'), await pidOf(remote, 'b')];
    expect(pids.every(isProcessAlive)).toBe(true);
    await manager.close();
    await manager.close();
    await waitFor(() => pids.every((pid) => !isProcessAlive(pid)), { what: 'every process to be gone' });
    expect(manager.ids).toEqual([]);
    expect(() => manager.add(Environment.local({ id: 'late' }))).toThrow(ExecError);
  });

  test('remove closes one environment and moves the default', async () => {
    await using manager = new EnvironmentManager();
    manager.add(Environment.local({ id: 'one' }));
    const two = manager.add(Environment.local({ id: 'two' }));
    const pid = await pidOf(manager.require('one'), 'p');
    await manager.remove('one');
    expect(manager.default).toBe(two);
    await waitFor(() => !isProcessAlive(pid), { what: 'the removed environment to kill its process' });
  });
});
