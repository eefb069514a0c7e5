import { describe, expect, test } from 'vitest';
import { classifyMessage } from '../envelope.ts';
import { notificationMessage } from '../messages.ts';
import { createJsonCodec } from './index.ts';
import { decodeJson } from './json.ts';
import { DEFAULT_DECODE_LIMITS } from './limits.ts';
import { decodeOutputBatchJsonFrame, decodeOutputJsonFrame } from './output-frames-decode.ts';
import { fastOutputJsonBytes } from './output-frames-json.ts';

const codec = createJsonCodec();
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff);
const b64 = (data: Uint8Array): string => Buffer.from(data).toString('base64');

/** What the ordinary path makes of a frame: the message, or the error it throws. */
function ordinary(frame: Uint8Array): unknown {
  try {
    return classifyMessage(decodeJson(frame, DEFAULT_DECODE_LIMITS, true));
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

function viaCodec(frame: Uint8Array): unknown {
  try {
    return codec.decode(frame);
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

/** The message with its chunks as bytes (the ordinary path leaves base64 for the schema). */
function withBytes(message: unknown): unknown {
  const m = message as { params?: { chunk?: unknown; chunks?: { chunk: unknown }[] } };
  const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
  if (Array.isArray(m.params?.chunks)) {
    const chunks = m.params.chunks.map((c) => ({ ...c, chunk: bytesOf(c.chunk as string) }));
    return { ...m, params: { ...m.params, chunks } };
  }
  if (typeof m.params?.chunk !== 'string') return message;
  return { ...m, params: { ...m.params, chunk: bytesOf(m.params.chunk) } };
}

describe('the JSON codec reads process/output frames straight from their bytes', () => {
  test('every frame the fast encoder writes, any seq, stream and size: the ordinary result, chunk as bytes', () => {
    for (const seq of [0, 1, 9, 10, 123_456, 2 ** 32, Number.MAX_SAFE_INTEGER])
      for (const stream of ['stdout', 'stderr', 'pty'])
        for (const size of [0, 1, 2, 3, 8191, 8192]) {
          const chunk = bytes(size);
          const frame = fastOutputJsonBytes(
            notificationMessage('process/output', { processId: `proc-${seq}`, seq, stream, chunk }),
          )!;
          const fast = decodeOutputJsonFrame(frame, DEFAULT_DECODE_LIMITS);
          expect(fast).toBeDefined();
          expect(codec.decode(frame)).toEqual(withBytes(ordinary(frame)));
          expect(Buffer.from((fast!.params as { chunk: Uint8Array }).chunk).equals(chunk)).toBe(true);
        }
  });

  test('the original exec-server writes the same layout, and it is read the same way', () => {
    // As captured from `codex exec-server` 0.169.0.
    const frame = utf8(
      '{"method":"process/output","params":{"processId":"p1","seq":1,"stream":"stdout","chunk":"aGkK"}}',
    );
    expect(decodeOutputJsonFrame(frame, DEFAULT_DECODE_LIMITS)).toEqual({
      method: 'process/output',
      params: { processId: 'p1', seq: 1, stream: 'stdout', chunk: utf8('hi\n') },
    });
  });

  const head = '{"method":"process/output","params":{"processId":';
  const unusual: Record<string, string> = {
    'an escaped quote in the id': `${head}"a\\"b","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
    'an escape in the id': `${head}"a\\u0041","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
    'a non-ASCII id': `${head}"é😀","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
    'a control character in the id': `${head}"a\u0001b","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
    'whitespace between members': `${head} "p","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
    'trailing whitespace': `${head}"p","seq":1,"stream":"stdout","chunk":"aGkK"}} `,
    'members in another order': `${head}"p","stream":"stdout","seq":1,"chunk":"aGkK"}}`,
    'an extra member': `${head}"p","seq":1,"stream":"stdout","chunk":"aGkK","x":1}}`,
    'a leading zero in seq': `${head}"p","seq":01,"stream":"stdout","chunk":"aGkK"}}`,
    'a fraction in seq': `${head}"p","seq":1.0,"stream":"stdout","chunk":"aGkK"}}`,
    'an exponent in seq': `${head}"p","seq":1e3,"stream":"stdout","chunk":"aGkK"}}`,
    'a negative seq': `${head}"p","seq":-1,"stream":"stdout","chunk":"aGkK"}}`,
    'a seq beyond safe integers': `${head}"p","seq":9007199254740993,"stream":"stdout","chunk":"aGkK"}}`,
    'a string seq': `${head}"p","seq":"1","stream":"stdout","chunk":"aGkK"}}`,
    'an escape in the base64': `${head}"p","seq":1,"stream":"stdout","chunk":"\\u0061GkK"}}`,
    'non-canonical base64': `${head}"p","seq":1,"stream":"stdout","chunk":"QR=="}}`,
    'base64 without padding': `${head}"p","seq":1,"stream":"stdout","chunk":"aGk"}}`,
    'base64 with a line break': `${head}"p","seq":1,"stream":"stdout","chunk":"aGkK\\naGkK"}}`,
    'a quote inside the chunk': `${head}"p","seq":1,"stream":"stdout","chunk":"aG"kK"}}`,
    'a chunk that is not a string': `${head}"p","seq":1,"stream":"stdout","chunk":null}}`,
    'a cut frame': `${head}"p","seq":1,"stream":"stdout","chunk":"aGkK"`,
    'an id, a request': `{"id":1,"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
  };
  test.each(Object.entries(unusual))('%s: left to the ordinary path, which decides', (_, text) => {
    const frame = utf8(text);
    expect(decodeOutputJsonFrame(frame, DEFAULT_DECODE_LIMITS)).toBeUndefined();
    expect(viaCodec(frame)).toEqual(ordinary(frame));
  });

  test('invalid UTF-8 anywhere is refused as the ordinary path refuses it', () => {
    const good = utf8(`${head}"p","seq":1,"stream":"stdout","chunk":"aGkK"}}`);
    for (const at of [head.length + 1, good.length - 5]) {
      const frame = Uint8Array.from(good);
      frame[at] = 0xff;
      expect(decodeOutputJsonFrame(frame, DEFAULT_DECODE_LIMITS)).toBeUndefined();
      expect(viaCodec(frame)).toEqual({ threw: 'JSON-RPC message is not valid UTF-8' });
    }
  });

  test('the limits hold: a frame or a chunk above them is left to the ordinary path', () => {
    const chunk = bytes(3000);
    const frame = utf8(`${head}"p","seq":1,"stream":"stdout","chunk":"${b64(chunk)}"}}`);
    const small = createJsonCodec({ maxFrameBytes: frame.length - 1 });
    expect(
      decodeOutputJsonFrame(frame, { ...DEFAULT_DECODE_LIMITS, maxFrameBytes: frame.length - 1 }),
    ).toBeUndefined();
    expect(() => small.decode(frame)).toThrow(/exceeds maximum length/);
    const short = { ...DEFAULT_DECODE_LIMITS, maxStringLength: 100 };
    expect(decodeOutputJsonFrame(frame, short)).toBeUndefined();
    expect(() => createJsonCodec({ maxStringLength: 100 }).decode(frame)).toThrow(/longer than 100/);
  });

  test('a very long id is left to the ordinary path (and read there)', () => {
    const id = 'i'.repeat(5000);
    const frame = utf8(`${head}"${id}","seq":1,"stream":"stdout","chunk":"aGkK"}}`);
    expect(decodeOutputJsonFrame(frame, DEFAULT_DECODE_LIMITS)).toBeUndefined();
    expect((codec.decode(frame) as { params: { processId: string } }).params.processId).toBe(id);
  });
});

describe('the JSON codec reads process/outputBatch frames straight from their bytes', () => {
  const batch = (chunks: { seq: number; stream: string; chunk: Uint8Array }[], processId = 'p-1') =>
    fastOutputJsonBytes(notificationMessage('process/outputBatch', { processId, chunks }))!;

  test('every batch the fast encoder writes: the ordinary result, chunks as bytes, one allocation', () => {
    for (const count of [0, 1, 2, 3, 32, 500]) {
      const chunks = Array.from({ length: count }, (_, i) => ({
        seq: i === 0 ? 0 : 2 ** 32 + i,
        stream: ['stdout', 'stderr', 'pty'][i % 3]!,
        chunk: bytes([0, 1, 2, 3, 8191, 8192][i % 6]!),
      }));
      const frame = batch(chunks);
      const fast = decodeOutputBatchJsonFrame(frame, DEFAULT_DECODE_LIMITS);
      expect(fast).toBeDefined();
      expect(codec.decode(frame)).toEqual(withBytes(ordinary(frame)));
      const decoded = (fast!.params as { chunks: { chunk: Uint8Array }[] }).chunks.map((c) => c.chunk);
      expect(decoded.map((c) => Buffer.from(c).toString('hex'))).toEqual(
        chunks.map((c) => Buffer.from(c.chunk).toString('hex')),
      );
      // Views of one buffer, side by side, none overlapping the next.
      for (let i = 1; i < decoded.length; i++) {
        expect(decoded[i]!.buffer).toBe(decoded[0]!.buffer);
        expect(decoded[i]!.byteOffset).toBe(decoded[i - 1]!.byteOffset + decoded[i - 1]!.byteLength);
      }
    }
  });

  const head = '{"method":"process/outputBatch","params":{"processId":';
  const one = '{"seq":1,"stream":"stdout","chunk":"aGkK"}';
  const unusual: Record<string, string> = {
    'an escape in the id': `${head}"a\\"b","chunks":[${one}]}}`,
    'whitespace between chunks': `${head}"p","chunks":[${one}, ${one}]}}`,
    'a trailing comma': `${head}"p","chunks":[${one},]}}`,
    'members of a chunk in another order': `${head}"p","chunks":[{"stream":"stdout","seq":1,"chunk":"aGkK"}]}}`,
    'an extra member in a chunk': `${head}"p","chunks":[{"seq":1,"stream":"stdout","chunk":"aGkK","x":1}]}}`,
    'an extra member in params': `${head}"p","chunks":[${one}],"x":1}}`,
    'non-canonical base64 in the second chunk': `${head}"p","chunks":[${one},{"seq":2,"stream":"stdout","chunk":"QR=="}]}}`,
    'an escaped quote in a chunk': `${head}"p","chunks":[{"seq":1,"stream":"stdout","chunk":"aG\\"kK"}]}}`,
    'a chunk that is not a string': `${head}"p","chunks":[{"seq":1,"stream":"stdout","chunk":7}]}}`,
    'a negative seq': `${head}"p","chunks":[{"seq":-1,"stream":"stdout","chunk":"aGkK"}]}}`,
    'a cut frame': `${head}"p","chunks":[${one}`,
    'something after the frame': `${head}"p","chunks":[${one}]}}]`,
    'chunks that are not an array': `${head}"p","chunks":{}}}`,
  };
  test.each(Object.entries(unusual))('%s: left to the ordinary path, which decides', (_, text) => {
    const frame = utf8(text);
    expect(decodeOutputBatchJsonFrame(frame, DEFAULT_DECODE_LIMITS)).toBeUndefined();
    expect(viaCodec(frame)).toEqual(ordinary(frame));
  });

  test("the limits hold: values, depth, string and frame length are the ordinary path's", () => {
    const chunks = Array.from({ length: 10 }, (_, i) => ({ seq: i, stream: 'stdout', chunk: bytes(300) }));
    const frame = batch(chunks);
    const cases: [Partial<typeof DEFAULT_DECODE_LIMITS>, RegExp][] = [
      [{ maxValues: 5 + 4 * 10 - 1 }, /values/],
      [{ maxDepth: 3 }, /nest|deep/],
      [{ maxStringLength: 100 }, /longer than 100/],
      [{ maxFrameBytes: frame.length - 1 }, /exceeds maximum length/],
    ];
    for (const [limits, error] of cases) {
      expect(decodeOutputBatchJsonFrame(frame, { ...DEFAULT_DECODE_LIMITS, ...limits })).toBeUndefined();
      expect(() => createJsonCodec(limits).decode(frame)).toThrow(error);
    }
    // Exactly at the value limit it is still read.
    expect(decodeOutputBatchJsonFrame(frame, { ...DEFAULT_DECODE_LIMITS, maxValues: 45 })).toBeDefined();
    expect(createJsonCodec({ maxValues: 45 }).decode(frame)).toMatchObject({ method: 'process/outputBatch' });
  });
});
