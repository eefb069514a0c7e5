// The ExecBackend scenario suite (`@execd/test-kit`), unchanged, against a real execd exec-server
// over WebSocket: once with the msgpack codec, once with the json codec. Every child the servers
// launch is tracked: the kit's leak check after each test fails on a survivor.
import { defineExecProcessScenarios } from '@execd/test-kit';
import { remoteBackendWithServer } from './helpers/harness.ts';

defineExecProcessScenarios('remote msgpack', () => remoteBackendWithServer('msgpack'));
defineExecProcessScenarios('remote json', () => remoteBackendWithServer('json'));
