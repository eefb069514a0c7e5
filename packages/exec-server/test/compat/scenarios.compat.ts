// The ExecBackend scenario suite, unchanged, driven by the execd client (json codec) against the
// original Codex exec-server.
import { afterAll, beforeAll } from 'vitest';
import { ExecServerClient } from '../../src/client/exec-server-client.ts';
import { RemoteBackend } from '../../src/client/remote-backend.ts';
import { defineExecProcessScenarios } from '../scenarios/exec-process-scenarios.ts';
import { type PeerServer, startPeerServer } from './peer-server.ts';

let peer: PeerServer;

beforeAll(async () => {
  peer = await startPeerServer();
});

afterAll(async () => {
  await peer?.close();
});

defineExecProcessScenarios('original exec-server, json', async () => {
  const client = await ExecServerClient.connect({ url: peer.url, codec: 'json', clientName: 'execd-compat' });
  return new RemoteBackend(client);
});
