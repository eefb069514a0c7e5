import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { awaitGreeting, readSecretLine } from './greeting.ts';

const SECRET = randomBytes(32);

/** A TCP peer on 127.0.0.1 that sends `banner` first and counts what it receives. */
async function peer(banner: Buffer | undefined) {
  let received = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.on('error', () => {});
    if (banner) socket.write(banner);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    connect: () => net.connect(port, '127.0.0.1'),
    received: () => received,
    [Symbol.asyncDispose]: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('awaitGreeting', () => {
  test('the right secret passes, and bytes after it are handed back', async () => {
    await using server = await peer(Buffer.concat([SECRET, Buffer.from('early')]));
    const socket = server.connect();
    const rest = await awaitGreeting(socket, SECRET, 10_000);
    socket.destroy();
    expect(rest?.toString()).toBe('early');
  });

  test('a wrong secret of the right length fails, and the peer receives nothing', async () => {
    const wrong = Buffer.from(SECRET);
    wrong[31] = (wrong[31] ?? 0) ^ 1;
    await using server = await peer(wrong);
    const socket = server.connect();
    expect(await awaitGreeting(socket, SECRET, 10_000)).toBeUndefined();
    socket.destroy();
    expect(server.received()).toBe(0);
  });

  test('a peer that closes after a short banner fails', async () => {
    await using server = await peer(Buffer.from('+OK daemon ready\r\n'));
    const socket = server.connect();
    const greeting = awaitGreeting(socket, SECRET, 10_000);
    socket.end();
    expect(await greeting).toBeUndefined();
    socket.destroy();
  });

  test('a silent peer fails after the timeout', async () => {
    await using server = await peer(undefined);
    const socket = server.connect();
    expect(await awaitGreeting(socket, SECRET, 50)).toBeUndefined();
    socket.destroy();
    expect(server.received()).toBe(0);
  });
});

describe('readSecretLine', () => {
  test('reads the hex line and leaves the stream flowing', async () => {
    const input = new PassThrough();
    const reading = readSecretLine(input, 32);
    input.write(`${SECRET.toString('hex').slice(0, 10)}`);
    input.write(`${SECRET.toString('hex').slice(10)}\n`);
    expect((await reading).equals(SECRET)).toBe(true);
  });

  test('a malformed line or an early end is refused', async () => {
    const short = new PassThrough();
    const shortReading = readSecretLine(short, 32);
    short.end('abcd\n');
    await expect(shortReading).rejects.toThrow();
    const ended = new PassThrough();
    const endedReading = readSecretLine(ended, 32);
    ended.end();
    await expect(endedReading).rejects.toThrow();
  });
});
