// The ExecBackend scenario suite, unchanged, driven by the execd client (json codec) against the
// original Codex exec-server.

import { defineExecProcessScenarios, type PeerServer, startPeerServer } from '@execd/test-kit';
import { afterAll, beforeAll } from 'vitest';
import { ExecServerClient } from '../../src/exec-server-client.ts';
import { RemoteBackend } from '../../src/remote-backend.ts';

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
