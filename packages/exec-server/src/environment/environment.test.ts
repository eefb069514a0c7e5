// Environments, local and remote (a real exec-server on 127.0.0.1:0), and the manager.
import { ExecError } from '@execd/protocol';
import { isProcessAlive } from '@execd/pty-utils';
import { describe, expect, test } from 'vitest';
import { waitFor } from '../../test/helpers/wait-for.ts';
import { execParams, readUntil } from '../../test/scenarios/exec-process-helpers.ts';
import { startExecServer } from '../server/index.ts';
import { EnvironmentManager } from './environment-manager.ts';
import { LocalEnvironment } from './local-environment.ts';
import { RemoteEnvironment } from './remote-environment.ts';

async function pidOf(env: LocalEnvironment | RemoteEnvironment, id: string): Promise<number> {
  const proc = await env.backend.start(execParams(id, ['sh', '-c', 'printf "%s\\n" "$$"; exec sleep 60']));
  const { text } = await readUntil(proc, { until: (o) => o.text.endsWith('\n') });
  return Number(text.trim());
}

describe('environments', () => {
  test('remote_environment_fetches_info_from_exec_server: remote info equals local info', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    await using local = new LocalEnvironment();
    await using remote = await RemoteEnvironment.connect('devbox', { url: server.url });
    const [localInfo, remoteInfo] = await Promise.all([local.info(), remote.info()]);
    expect(remoteInfo).toEqual(localInfo);
    expect(await remote.info()).toBe(await remote.info());
    expect(await remote.status()).toEqual({ status: 'ready' });
    expect([local.id, local.kind, remote.id, remote.kind]).toEqual(['local', 'local', 'devbox', 'remote']);
  });

  test('the manager holds environments by id and closes them all', async () => {
    await using server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
    const manager = new EnvironmentManager();
    const local = manager.add(new LocalEnvironment());
    const remote = manager.add(await RemoteEnvironment.connect('devbox', { url: server.url, codec: 'json' }));
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
        manager.add(new LocalEnvironment());
      } catch (error) {
        return error;
      }
    })();
    expect(ExecError.is(duplicate) && duplicate.code).toBe('invalidParams');

    const pids = [await pidOf(local as LocalEnvironment, 'a'), await pidOf(remote as RemoteEnvironment, 'b')];
    expect(pids.every(isProcessAlive)).toBe(true);
    await manager.close();
    await manager.close();
    await waitFor(() => pids.every((pid) => !isProcessAlive(pid)), { what: 'every process to be gone' });
    expect(manager.ids).toEqual([]);
    expect(() => manager.add(new LocalEnvironment({ id: 'late' }))).toThrow(ExecError);
  });

  test('remove closes one environment and moves the default', async () => {
    await using manager = new EnvironmentManager();
    manager.add(new LocalEnvironment({ id: 'one' }));
    const two = manager.add(new LocalEnvironment({ id: 'two' }));
    const pid = await pidOf(manager.require('one') as LocalEnvironment, 'p');
    await manager.remove('one');
    expect(manager.default).toBe(two);
    await waitFor(() => !isProcessAlive(pid), { what: 'the removed environment to kill its process' });
  });
});
