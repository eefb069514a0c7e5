import { describe, expect, test } from 'vitest';
import { classifyMessage } from '../envelope.ts';
import { notificationMessage } from '../messages.ts';
import { createJsonCodec } from './index.ts';
import { decodeJson } from './json.ts';
import { DEFAULT_DECODE_LIMITS } from './limits.ts';
import { fastOutputJsonBytes } from './output-frames.ts';
import { decodeOutputJsonFrame } from './output-frames-decode.ts';

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

/** The message with its chunk as bytes (the ordinary path leaves base64 for the schema). */
function withBytes(message: unknown): unknown {
  const m = message as { params?: { chunk?: unknown } };
  if (typeof m.params?.chunk !== 'string') return message;
  return { ...m, params: { ...m.params, chunk: new Uint8Array(Buffer.from(m.params.chunk, 'base64')) } };
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
