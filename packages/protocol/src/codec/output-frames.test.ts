import { describe, expect, test } from 'vitest';
import { toWireObject } from '../envelope.ts';
import { notificationMessage } from '../messages.ts';
import { createJsonCodec, createMsgpackCodec } from './index.ts';
import { encodeJson, encodeJsonText } from './json.ts';
import { encodeMsgpack } from './msgpack.ts';
import { fastOutputMsgpack, outputBatchMsgpackParts } from './output-frames.ts';
import { fastOutputJsonBytes, fastOutputJsonText } from './output-frames-json.ts';

const bytes = (n: number, seed = 7): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * seed + 3) & 0xff);
const SEQS = [
  0,
  1,
  127,
  128,
  255,
  256,
  65_535,
  65_536,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 40 + 5,
  Number.MAX_SAFE_INTEGER,
];
const SIZES = [1, 255, 256, 8192, 65_535, 65_536];
const IDS = ['p', 'x'.repeat(31), 'x'.repeat(32), 'y'.repeat(255), 'z'.repeat(256), 'é-ü-😀', 'q"\\\n\u0000'];

/** Byte equality without vitest's element-wise diff (slow and memory-hungry on large arrays). */
const same = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && Buffer.from(a).equals(b);

const output = (processId: string, seq: number, chunk: Uint8Array, stream = 'stdout') =>
  notificationMessage('process/output', { processId, seq, stream, chunk });

describe('the fast process/output encoders write exactly what the generic codecs write', () => {
  test.each(SEQS)('msgpack and JSON, seq %d, every chunk size and id', (seq) => {
    for (const size of SIZES)
      for (const id of IDS) {
        const message = output(id, seq, bytes(size), size % 2 ? 'stderr' : 'pty');
        expect(same(fastOutputMsgpack(message), encodeMsgpack(toWireObject(message)))).toBe(true);
        expect(fastOutputJsonText(message)).toBe(encodeJsonText(toWireObject(message)));
        expect(same(fastOutputJsonBytes(message), encodeJson(toWireObject(message)))).toBe(true);
      }
  });

  test('a batch of 0, 1, 15, 16 and 70,000 chunks (array headers of every width), both codecs', () => {
    for (const count of [0, 1, 15, 16, 70_000]) {
      const chunks = Array.from({ length: count }, (_, i) => ({
        seq: i + 1,
        stream: 'stdout',
        chunk: bytes(1 + (i % 300), i),
      }));
      const message = notificationMessage('process/outputBatch', { processId: 'batch', chunks });
      const generic = encodeMsgpack(toWireObject(message));
      expect(same(fastOutputMsgpack(message), generic)).toBe(true);
      expect(fastOutputJsonText(message)).toBe(encodeJsonText(toWireObject(message)));
      expect(same(fastOutputJsonBytes(message), encodeJson(toWireObject(message)))).toBe(true);
      const parts = outputBatchMsgpackParts(message);
      if (count === 0) expect(parts).toBeUndefined();
      else {
        expect(parts).toHaveLength(2 * count);
        expect(same(Buffer.concat(parts!), generic)).toBe(true);
        // The chunks travel as themselves, not as copies.
        for (let i = 0; i < count; i++) expect(parts![2 * i + 1]).toBe(chunks[i]!.chunk);
      }
    }
  });

  test('a chunk that is a view into a larger buffer is written from its own bytes only', () => {
    const backing = bytes(1000);
    const message = output('v', 9, backing.subarray(100, 200));
    const decoded = createMsgpackCodec().decode(fastOutputMsgpack(message)!);
    expect(decoded).toMatchObject({ params: { chunk: backing.subarray(100, 200) } });
    expect(JSON.parse(fastOutputJsonText(message)!).params.chunk).toBe(
      Buffer.from(backing.subarray(100, 200)).toString('base64'),
    );
  });

  test('anything else takes the generic path: other shapes, extra or reordered members, a trace', () => {
    const chunk = bytes(4);
    const others = [
      notificationMessage('process/exited', { processId: 'p', seq: 1, exitCode: 0 }),
      notificationMessage('process/output', { seq: 1, processId: 'p', stream: 'stdout', chunk }),
      notificationMessage('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk, extra: 1 }),
      notificationMessage('process/output', { processId: 'p', seq: -1, stream: 'stdout', chunk }),
      notificationMessage('process/output', { processId: 'p', seq: 1.5, stream: 'stdout', chunk }),
      notificationMessage('process/output', { processId: 'p', seq: 1, stream: 'stdout', chunk: 'AAAA' }),
      notificationMessage('process/outputBatch', {
        processId: 'p',
        chunks: [{ stream: 'stdout', seq: 1, chunk }],
      }),
      { ...output('p', 1, chunk), trace: { traceparent: 'x' } },
    ];
    for (const message of others) {
      expect(fastOutputMsgpack(message as never)).toBeUndefined();
      expect(fastOutputJsonText(message as never)).toBeUndefined();
      expect(fastOutputJsonBytes(message as never)).toBeUndefined();
    }
  });

  test('a batch with unusual ids and streams is escaped as the generic codec escapes it', () => {
    for (const id of IDS) {
      const chunks = ['stdout', 'é', 'a"b'].map((stream, i) => ({ seq: i, stream, chunk: bytes(i * 7) }));
      const message = notificationMessage('process/outputBatch', { processId: id, chunks });
      expect(fastOutputJsonText(message)).toBe(encodeJsonText(toWireObject(message)));
      expect(same(fastOutputJsonBytes(message), encodeJson(toWireObject(message)))).toBe(true);
    }
  });

  test.each(['json', 'msgpack'] as const)(
    'encodeInto lays out exactly the bytes of encode, anywhere in any memory (%s)',
    (name) => {
      const codec = name === 'json' ? createJsonCodec() : createMsgpackCodec();
      const messages = [
        output('é-ü-😀', 2 ** 40 + 5, bytes(8191), 'pty'),
        ...SEQS.map((seq, i) => output(IDS[i % IDS.length]!, seq, bytes(SIZES[i % SIZES.length]!, i))),
        notificationMessage('process/outputBatch', {
          processId: 'q"\\',
          chunks: [1, 2, 3].map((seq) => ({ seq, stream: 'stderr', chunk: bytes(seq * 100) })),
        }),
        notificationMessage('process/outputBatch', {
          processId: 'y'.repeat(256),
          chunks: SEQS.map((seq, i) => ({ seq, stream: 'stdout', chunk: bytes(i * 301, i) })),
        }),
      ];
      for (const message of messages) {
        const writer = codec.encodeInto(message)!;
        const encoded = codec.encode(message);
        expect(writer.size).toBe(encoded.byteLength);
        // A view that starts inside its memory: the writer must count from the view, not the buffer.
        const inside = new Uint8Array(writer.size + 40).subarray(11, writer.size + 31);
        for (const target of [new Uint8Array(writer.size + 9), Buffer.alloc(writer.size + 9), inside]) {
          writer.write(target, 5);
          expect(same(target.subarray(5, 5 + writer.size), encoded)).toBe(true);
          const rest = [...target.subarray(0, 5), ...target.subarray(5 + writer.size)];
          expect(rest).toEqual(Array(target.byteLength - writer.size).fill(0));
        }
      }
      expect(
        codec.encodeInto(notificationMessage('process/exited', { processId: 'p', seq: 1, exitCode: 0 })),
      ).toBeUndefined();
    },
  );

  test('the codecs use them and still round-trip', () => {
    const message = output('rt', 42, bytes(8192));
    for (const codec of [createJsonCodec(), createMsgpackCodec()]) {
      expect(codec.decode(codec.encode(message))).toMatchObject({
        kind: 'notification',
        method: 'process/output',
      });
    }
    expect(createJsonCodec().encodeText(message)).toBe(encodeJsonText(toWireObject(message)));
  });
});
