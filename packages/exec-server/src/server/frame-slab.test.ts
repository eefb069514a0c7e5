import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { createJsonCodec, notificationMessage } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { FRAME_SLAB_BYTES, FrameSlab, MIN_FRAME_SLAB_BYTES } from './frame-slab.ts';

// ws's own frame parser (what a ws client runs on what it reads); its types do not declare it.
const { Receiver } = createRequire(import.meta.url)('ws') as {
  Receiver: new (options: { isServer: boolean; skipUTF8Validation: boolean }) => Writable & EventEmitter;
};

const json = createJsonCodec();

/** What a client's ws receiver makes of the bytes: the text messages, in order. */
async function received(segments: readonly Buffer[]): Promise<string[]> {
  const messages: string[] = [];
  const receiver = new Receiver({ isServer: false, skipUTF8Validation: false });
  const failed = new Promise<never>((_, reject) => receiver.on('error', reject));
  receiver.on('message', (data: Buffer, isBinary: boolean) => {
    expect(isBinary).toBe(false);
    messages.push(data.toString());
  });
  for (const segment of segments) receiver.write(segment);
  await Promise.race([new Promise((resolve) => setImmediate(resolve)), failed]);
  return messages;
}

const output = (seq: number, size: number) =>
  notificationMessage('process/output', {
    processId: 'p',
    seq,
    stream: 'stdout',
    chunk: Buffer.alloc(size, seq % 251),
  });

describe('FrameSlab', () => {
  test('frames of every header width read back exactly as the codec encodes them', async () => {
    const slab = new FrameSlab();
    const spilled: Buffer[] = [];
    // Payload lengths around the 7-bit / 16-bit / 64-bit header boundaries, and a frame larger
    // than a slab (it gets a slab of its own).
    const sizes = [0, 1, 30, 31, 32, 48_000, 49_100, 49_200, FRAME_SLAB_BYTES];
    const messages = sizes.map((size, i) => output(i + 1, size));
    const expected: string[] = [];
    for (const message of messages) {
      const writer = json.encodeInto(message)!;
      const text = Buffer.from(json.encode(message)).toString();
      expect(writer.size).toBe(Buffer.byteLength(text));
      expected.push(text);
      const head = writer.size < 126 ? 2 : writer.size < 65_536 ? 4 : 10;
      expect(slab.appendText(writer, (segment) => spilled.push(segment))).toBe(head + writer.size);
    }
    const sizesOnWire = expected.map((text) => Buffer.byteLength(text));
    expect(sizesOnWire.some((n) => n < 126)).toBe(true);
    expect(sizesOnWire.some((n) => n >= 126 && n < 65_536)).toBe(true);
    expect(sizesOnWire.some((n) => n >= 65_536)).toBe(true);
    const last = slab.take();
    expect(slab.pending).toBe(0);
    expect(slab.take()).toBeUndefined();
    expect(await received([...spilled, last!])).toEqual(expected);
  });

  test('what was taken stays as it was while later frames are appended', async () => {
    const slab = new FrameSlab();
    // Each segment handed out (spilled or taken), with a copy made when it was handed out.
    const taken: { view: Buffer; copy: Buffer }[] = [];
    const keep = (view: Buffer): void => void taken.push({ view, copy: Buffer.from(view) });
    const expected: string[] = [];
    for (let seq = 1; seq <= 200; seq++) {
      const message = output(seq, 4_000);
      expected.push(Buffer.from(json.encode(message)).toString());
      slab.appendText(json.encodeInto(message)!, keep);
      // A turn ends every few frames.
      if (seq % 7 === 0) keep(slab.take()!);
    }
    const rest = slab.take();
    if (rest) keep(rest);
    // 200 frames of ~5.4 KB filled more than one slab: some segments were spilled.
    expect(taken.length).toBeGreaterThan(Math.ceil(200 / 7));
    for (const { view, copy } of taken) expect(view.equals(copy)).toBe(true);
    expect(await received(taken.map(({ view }) => view))).toEqual(expected);
  });

  test('memory follows the output: small slabs for little, 256 KiB while streaming, none kept full', () => {
    const slab = new FrameSlab();
    const spill = (): void => {};
    // A little output per turn: a small slab, kept across turns (mostly unused).
    for (let seq = 1; seq <= 3; seq++) {
      slab.appendText(json.encodeInto(output(seq, 50))!, spill);
      slab.take();
      expect(slab.capacity).toBe(MIN_FRAME_SLAB_BYTES);
    }
    // Streaming: turns of ~430 KB; the slabs grow to the largest size.
    const sizes = new Set<number>();
    for (let turn = 0; turn < 4; turn++) {
      for (let i = 0; i < 80; i++) {
        slab.appendText(json.encodeInto(output(i, 4_000))!, spill);
        sizes.add(slab.capacity);
      }
      slab.take();
    }
    expect(Math.max(...sizes)).toBe(FRAME_SLAB_BYTES);
    // A slab more than half used is let go once its frames are taken.
    const big = new FrameSlab();
    big.appendText(json.encodeInto(output(1, 100_000))!, spill);
    expect(big.capacity).toBeGreaterThan(0);
    big.take();
    expect(big.capacity).toBe(0);
  });

  test('drop forgets what is pending', () => {
    const slab = new FrameSlab();
    slab.appendText(json.encodeInto(output(1, 10))!, () => {});
    expect(slab.pending).toBeGreaterThan(0);
    slab.drop();
    expect(slab.pending).toBe(0);
    expect(slab.take()).toBeUndefined();
  });
});
