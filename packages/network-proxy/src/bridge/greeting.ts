import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';

/**
 * Waits for the proxy's secret greeting on a freshly connected `upstream`: exactly
 * `secret.length` bytes, compared in constant time. Resolves with the bytes that came after the
 * secret (normally none) when it matches; undefined when the peer sent something else, closed,
 * failed, or stayed silent for `timeoutMs`. Nothing is written to `upstream` meanwhile, and the
 * caller forwards nothing until this resolves, so a socket that is not the proxy gets no byte.
 */
export function awaitGreeting(
  upstream: Socket,
  secret: Buffer,
  timeoutMs: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const finish = (rest: Buffer | undefined): void => {
      clearTimeout(timer);
      upstream.off('data', onData);
      upstream.off('close', onEnd);
      upstream.off('end', onEnd);
      upstream.off('error', onEnd);
      upstream.pause();
      resolve(rest);
    };
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      if (received.length < secret.length) return;
      const head = received.subarray(0, secret.length);
      finish(timingSafeEqual(head, secret) ? received.subarray(secret.length) : undefined);
    };
    const onEnd = (): void => finish(undefined);
    const timer = setTimeout(onEnd, timeoutMs);
    upstream.on('data', onData);
    upstream.once('close', onEnd);
    upstream.once('end', onEnd);
    upstream.once('error', onEnd);
  });
}

/** Reads the first line of `input` (the secret in hex) and checks its length. */
export function readSecretLine(input: NodeJS.ReadableStream, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString();
      const newline = text.indexOf('\n');
      if (newline < 0) {
        if (text.length > bytes * 2 + 2) done(new Error('bridge secret: line too long'));
        return;
      }
      const line = text.slice(0, newline).trim();
      if (!new RegExp(`^[0-9a-f]{${bytes * 2}}$`).test(line)) done(new Error('bridge secret: malformed'));
      else done(undefined, Buffer.from(line, 'hex'));
    };
    const onEnd = (): void => done(new Error('bridge secret: stdin closed before the secret arrived'));
    const done = (error: Error | undefined, secret?: Buffer): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      if (error !== undefined || secret === undefined) reject(error);
      else resolve(secret);
    };
    input.on('data', onData);
    input.once('end', onEnd);
  });
}
