// The ExecBackend scenario suite, in-process (LocalBackend); afterEach checks no child survives.
import { afterEach } from 'vitest';
import { defaultSpawner } from '../../src/local/default-spawner.ts';
import { LocalBackend } from '../../src/local/local-backend.ts';
import type { Spawner } from '../../src/local/spawner.ts';
import { ProcessTracker } from '../helpers/process-tracker.ts';
import { defineExecProcessScenarios } from '../scenarios/exec-process-scenarios.ts';

const tracker = new ProcessTracker();

const trackingSpawner: Spawner = async (request) => {
  const launched = await defaultSpawner(request);
  tracker.add(launched.process.pid);
  return launched;
};

afterEach(async () => {
  await tracker.expectNoSurvivors();
});

defineExecProcessScenarios(
  'local',
  async () => new LocalBackend({ spawner: trackingSpawner, exitedRetentionMs: 2000 }),
);
