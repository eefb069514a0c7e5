// The ExecBackend scenario suite, in-process (LocalBackend); every child is tracked, so the kit's
// leak check after each test fails on a survivor.
import { defineExecProcessScenarios, ProcessTracker } from '@execd/test-kit';
import { defaultSpawner } from '../../src/local/default-spawner.ts';
import { LocalBackend } from '../../src/local/local-backend.ts';
import type { Spawner } from '../../src/local/spawner.ts';

const tracker = new ProcessTracker();

const trackingSpawner: Spawner = async (request) => {
  const launched = await defaultSpawner(request);
  tracker.add(launched.process.pid);
  return launched;
};

defineExecProcessScenarios(
  'local',
  async () => new LocalBackend({ spawner: trackingSpawner, exitedRetentionMs: 2000 }),
);
