import { describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('websocket transport', () => {
  test('exec_server_accepts_initialize: the session id is a UUID v4', async () => {
    await using server = await startTestServer({ fake: true });
    await using client = await RawWsClient.connect(server.url);
    const result = await client.initialize();
    expect(result.sessionId).toMatch(UUID_V4);
    expect(result.environmentInfo).toMatchObject({ shell: { name: expect.any(String) } });
    expect(client.frames.every((frame) => !frame.binary)).toBe(true);
  });
});
