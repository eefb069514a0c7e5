// A server that sends what no exec-server sends: the client refuses the frame, says why, and
// ends the connection (ws does not check text frames' UTF-8 for it: the JSON codec does).
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { ExecError } from '@execd/protocol';
import { expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import { ExecServerClient } from '../src/index.ts';

async function answeringWith(frame: Buffer): Promise<WebSocketServer & AsyncDisposable> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  wss.on('connection', (socket) => {
    socket.on('error', () => {});
    socket.once('message', () => socket.send(frame, { binary: false }));
  });
  return Object.assign(wss, {
    [Symbol.asyncDispose]: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  });
}

const url = (wss: WebSocketServer): string => `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;

for (const [what, text] of [
  [
    'an output notification',
    '{"method":"process/output","params":{"processId":"pX","seq":1,"stream":"stdout","chunk":"aGkK"}}',
  ],
  ['a response', '{"id":1,"result":{"x":"aX"}}'],
] as const) {
  test(`a text frame that is not UTF-8 (${what}) is refused: connect rejects and says so`, async () => {
    const frame = Buffer.from(text);
    frame[frame.indexOf('X')] = 0xff;
    await using server = await answeringWith(frame);
    const error = await ExecServerClient.connect({ url: url(server), codec: 'json' }).catch(
      (e: unknown) => e,
    );
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
    expect((error as Error).message).toMatch(
      /unreadable frame from the exec-server: JSON-RPC message is not valid UTF-8/,
    );
  });
}
