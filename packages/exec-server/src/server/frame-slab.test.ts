import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { createJsonCodec, createMsgpackCodec, notificationMessage } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import {
  FRAME_SLAB_BYTES,
  FRAME_SLAB_SIZES,
  FrameSlab,
  LARGE_FRAME_SLAB_BYTES,
  MIN_FRAME_SLAB_BYTES,
} from './frame-slab.ts';
import { SlabPool } from './slab-pool.ts';

// ws's own frame parser (what a ws client runs on what it reads); its types do not declare it.
const { Receiver } = createRequire(import.meta.url)('ws') as {
  Receiver: new (options: { isServer: boolean; skipUTF8Validation: boolean }) => Writable & EventEmitter;
};

const json = createJsonCodec();

/** A pool of this test's own (the process's is shared by every slab of the file). */
const ownPool = (maxBytesPerSize = 4 * 1024 * 1024, idleMs = 60_000) =>
  new SlabPool(FRAME_SLAB_SIZES, maxBytesPerSize, idleMs);

const msgpack = createMsgpackCodec();

/** What a client's ws receiver makes of the bytes: the messages in order, binary ones as hex. */
async function receivedFrames(segments: readonly Buffer[]): Promise<{ binary: boolean; data: string }[]> {
  const messages: { binary: boolean; data: string }[] = [];
  const receiver = new Receiver({ isServer: false, skipUTF8Validation: false });
  const failed = new Promise<never>((_, reject) => receiver.on('error', reject));
  receiver.on('message', (data: Buffer, binary: boolean) => {
    messages.push({ binary, data: data.toString(binary ? 'hex' : 'utf8') });
  });
  for (const segment of segments) receiver.write(segment);
  await Promise.race([new Promise((resolve) => setImmediate(resolve)), failed]);
  return messages;
}

/** The text messages the receiver makes of the bytes (every one must be text). */
async function received(segments: readonly Buffer[]): Promise<string[]> {
  const messages = await receivedFrames(segments);
  expect(messages.every((m) => !m.binary)).toBe(true);
  return messages.map((m) => m.data);
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
    const slab = new FrameSlab(ownPool());
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
      expect(slab.append(writer, false, (segment) => spilled.push(segment))).toBe(head + writer.size);
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

  test('binary (msgpack) frames and text frames interleave, each read back as what it is', async () => {
    const slab = new FrameSlab(ownPool());
    const spilled: Buffer[] = [];
    const expected: { binary: boolean; data: string }[] = [];
    const sizes = [0, 90, 100, 48_000, 65_400, 65_536, FRAME_SLAB_BYTES];
    for (const [i, size] of sizes.entries()) {
      for (const binary of [true, false]) {
        const message = output(2 * i + (binary ? 1 : 2), size);
        const codec = binary ? msgpack : json;
        const encoded = Buffer.from(codec.encode(message));
        expected.push({ binary, data: encoded.toString(binary ? 'hex' : 'utf8') });
        slab.append(codec.encodeInto(message)!, binary, (segment) => spilled.push(segment));
      }
    }
    // msgpack payloads right at the 7/16-bit header boundaries.
    const wire = expected.filter((m) => m.binary).map((m) => m.data.length / 2);
    expect(wire.some((n) => n < 126) && wire.some((n) => n >= 65_536)).toBe(true);
    expect(await receivedFrames([...spilled, slab.take()!])).toEqual(expected);
  });

  test('what was taken stays as it was while later frames are appended', async () => {
    const slab = new FrameSlab(ownPool());
    // Each segment handed out (spilled or taken), with a copy made when it was handed out.
    const taken: { view: Buffer; copy: Buffer }[] = [];
    const keep = (view: Buffer): void => void taken.push({ view, copy: Buffer.from(view) });
    const expected: string[] = [];
    for (let seq = 1; seq <= 200; seq++) {
      const message = output(seq, 4_000);
      expected.push(Buffer.from(json.encode(message)).toString());
      slab.append(json.encodeInto(message)!, false, keep);
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

  test('memory follows the output: small slabs for little, the largest while streaming, none kept full', () => {
    const slab = new FrameSlab(ownPool());
    const spill = (): void => {};
    // A little output per turn: a small slab, kept across turns (mostly unused).
    for (let seq = 1; seq <= 3; seq++) {
      slab.append(json.encodeInto(output(seq, 50))!, false, spill);
      slab.take();
      expect(slab.capacity).toBe(MIN_FRAME_SLAB_BYTES);
    }
    // Streaming: turns of ~430 KB; the slabs grow to the largest size.
    const sizes = new Set<number>();
    for (let turn = 0; turn < 4; turn++) {
      for (let i = 0; i < 80; i++) {
        slab.append(json.encodeInto(output(i, 4_000))!, false, spill);
        sizes.add(slab.capacity);
      }
      slab.take();
    }
    expect(Math.max(...sizes)).toBe(FRAME_SLAB_BYTES);
    // A slab more than half used is let go once its frames are taken.
    const big = new FrameSlab(ownPool());
    big.append(json.encodeInto(output(1, 200_000))!, false, spill);
    expect(big.capacity).toBeGreaterThan(0);
    big.take();
    big.settle(false);
    expect(big.capacity).toBe(0);
  });

  test('a slab the socket has written is filled again from its front while the output fits it', () => {
    const slab = new FrameSlab(ownPool());
    const spill = (): void => {};
    const turn = (frames: number, size: number): Buffer => {
      for (let i = 0; i < frames; i++) slab.append(json.encodeInto(output(i, size))!, false, spill);
      return slab.take()!;
    };
    // Streaming turns (~87 KB each), written by the socket: once the slab has grown to fit a
    // turn, the same memory serves every following turn, from its front.
    for (let i = 0; i < 3; i++) {
      turn(16, 4_000);
      slab.settle(true);
    }
    const first = turn(16, 4_000);
    for (let i = 0; i < 3; i++) {
      slab.settle(true);
      const again = turn(16, 4_000);
      expect(again.buffer).toBe(first.buffer);
      expect(again.byteOffset).toBe(0);
    }
    slab.settle(true);
    const small = turn(2, 4_000);
    expect(small.byteOffset).toBe(0);
    // Not written yet (the socket holds the segment): never rewritten; the next turn goes after it.
    slab.settle(false);
    const after = turn(2, 4_000);
    expect(after.buffer).toBe(first.buffer);
    expect(after.byteOffset).toBe(small.byteLength);
    // Output that became small does not rewind a slab too large for it (it is let go once more
    // than half used, as any other).
    slab.settle(true);
    const tiny = turn(1, 10);
    expect(tiny.byteOffset).toBe(small.byteLength + after.byteLength);
    slab.settle(true);
    expect(turn(1, 10).byteOffset).toBe(tiny.byteOffset + tiny.byteLength);
    // A slab never rewinds over frames not taken yet.
    slab.append(json.encodeInto(output(1, 10))!, false, spill);
    const pending = slab.pending;
    slab.settle(true);
    expect(slab.pending).toBe(pending);
  });

  test('drop forgets what is pending', () => {
    const slab = new FrameSlab(ownPool());
    slab.append(json.encodeInto(output(1, 10))!, false, () => {});
    expect(slab.pending).toBeGreaterThan(0);
    slab.drop();
    expect(slab.pending).toBe(0);
    expect(slab.take()).toBeUndefined();
  });

  test('behind a client that reads a frame at a time, small slabs come back: no new memory per turn', () => {
    const pool = ownPool();
    const slab = new FrameSlab(pool);
    const spill = (segment: Buffer): void => void held.push(segment);
    const held: Buffer[] = [];
    const memory = new Set<ArrayBufferLike>();
    // Turns of one ~11 KB frame (a Codex-like client), never written when their turn ends: each
    // slab fills and is replaced, and goes back once the socket reports its segments written.
    for (let turn = 0; turn < 200; turn++) {
      slab.append(json.encodeInto(output(turn + 1, 8_192))!, false, spill);
      held.push(slab.take()!);
      slab.settle(false);
      for (const segment of held.splice(0, Math.max(0, held.length - 4))) slab.written(segment);
      memory.add(held.at(-1)!.buffer);
    }
    // A few slabs, in a kept size, over and over: not one per turn.
    expect(memory.size).toBeLessThan(10);
    for (const buffer of memory) expect(FRAME_SLAB_SIZES).toContain(buffer.byteLength);
  });

  test('a replaced slab goes back to the pool once the socket wrote every segment of it, not before', () => {
    const pool = ownPool();
    const slab = new FrameSlab(pool);
    const spill = (): void => {};
    // Frames of ~133 KB: each needs a large slab, which holds two of them.
    const frame = (seq: number) => json.encodeInto(output(seq, 100_000))!;
    slab.append(frame(1), false, spill);
    const first = slab.take()!;
    slab.append(frame(2), false, spill);
    const second = slab.take()!;
    expect(second.buffer).toBe(first.buffer);
    expect(first.buffer.byteLength).toBe(LARGE_FRAME_SLAB_BYTES);
    // The third does not fit: the slab is replaced; nothing of it goes back while the socket holds it.
    slab.append(frame(3), false, spill);
    expect(slab.take()!.buffer).not.toBe(first.buffer);
    expect(pool.bytes).toBe(0);
    slab.written(first);
    expect(pool.bytes).toBe(0);
    slab.written(second);
    expect(pool.bytes).toBe(LARGE_FRAME_SLAB_BYTES);
    // The next large slab any connection takes is that memory.
    const other = new FrameSlab(pool);
    other.append(frame(1), false, spill);
    expect(other.take()!.buffer).toBe(first.buffer);
    expect(pool.bytes).toBe(0);
  });

  test('a frame larger than a slab gets a large one from the pool; a dropped slab never goes back', () => {
    const pool = ownPool();
    const slab = new FrameSlab(pool);
    const segments: Buffer[] = [];
    slab.append(json.encodeInto(output(1, 200_000))!, false, (segment) => void segments.push(segment));
    expect(slab.capacity).toBe(LARGE_FRAME_SLAB_BYTES);
    segments.push(slab.take()!);
    slab.append(json.encodeInto(output(2, 200_000))!, false, (segment) => void segments.push(segment));
    for (const segment of segments) slab.written(segment);
    expect(pool.bytes).toBe(LARGE_FRAME_SLAB_BYTES);
    // The socket is gone with a segment in it: its slab is not reused, even if reported later.
    const held = slab.take()!;
    slab.drop();
    slab.written(held);
    expect(pool.bytes).toBe(LARGE_FRAME_SLAB_BYTES);
  });

  test('writeSegment reports the segment written once the socket is done with it', async () => {
    const pool = ownPool();
    const slab = new FrameSlab(pool);
    const written: Buffer[] = [];
    const sink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        written.push(Buffer.from(chunk));
        setImmediate(done);
      },
    });
    let after = 0;
    for (let i = 0; i < 30; i++) slab.append(json.encodeInto(output(i, 4_000))!, false, () => {});
    const segment = slab.take()!;
    slab.writeSegment(sink, segment, () => after++);
    for (let i = 0; i < 30; i++)
      slab.append(json.encodeInto(output(i, 4_000))!, false, (s) => slab.writeSegment(sink, s));
    expect(pool.bytes).toBe(0);
    await new Promise((resolve) => sink.end(resolve));
    expect(after).toBe(1);
    expect(written[0]!.equals(segment)).toBe(true);
    // Every slab replaced meanwhile is back (the streaming ones at least one full-sized).
    expect(pool.bytes).toBeGreaterThanOrEqual(FRAME_SLAB_BYTES);
  });
});
