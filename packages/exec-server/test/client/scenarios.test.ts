// The ExecBackend scenario suite (test/scenarios), unchanged, against a real execd exec-server
// over WebSocket: once with the msgpack codec, once with the json codec.
import { afterEach } from 'vitest';
import { defineExecProcessScenarios } from '../scenarios/exec-process-scenarios.ts';
import { expectNoOpenSockets, remoteBackendWithServer, tracker } from './harness.ts';

afterEach(async () => {
  await tracker.expectNoSurvivors();
  await expectNoOpenSockets();
});

defineExecProcessScenarios('remote msgpack', () => remoteBackendWithServer('msgpack'));
defineExecProcessScenarios('remote json', () => remoteBackendWithServer('json'));
