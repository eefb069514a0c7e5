// Codec throughput: encode + decode + validate (the full send/receive path) of a 64 KiB
// `process/output` notification and of a `ReadResponse` with 100 chunks of 4 KiB, msgpack vs the
// JSON codec (the original's dialect, bytes as base64), measured in the same run.
import {
  createJsonCodec,
  createMsgpackCodec,
  decodeParams,
  decodeResult,
  notificationMessage,
  responseMessage,
} from '@execd/protocol';
import { compareOpsPerSecond, emit, figure } from './lib/measure.mjs';

const OUTPUT_BYTES = 64 * 1024;
const READ_CHUNKS = 100;
const READ_CHUNK_BYTES = 4 * 1024;

/** Deterministic bytes that look like terminal output (printable ASCII with newlines). */
function payload(length, seed) {
  const bytes = new Uint8Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = i % 80 === 79 ? 0x0a : 0x20 + ((state >>> 16) % 95);
  }
  return bytes;
}

const output = { processId: 'proc-1', seq: 1, stream: 'pty', chunk: payload(OUTPUT_BYTES, 1) };
const read = {
  chunks: Array.from({ length: READ_CHUNKS }, (_, i) => ({
    seq: i + 1,
    stream: i % 2 === 0 ? 'stdout' : 'stderr',
    chunk: payload(READ_CHUNK_BYTES, i + 2),
  })),
  nextSeq: READ_CHUNKS + 3,
  exited: true,
  exitCode: 0,
  closed: true,
  failure: null,
  sandboxDenied: false,
};

const codecs = { msgpack: createMsgpackCodec(), json: createJsonCodec() };

const cases = [
  {
    name: 'process/output 64 KiB',
    payloadBytes: OUTPUT_BYTES,
    roundTrip: (codec) => () => {
      const message = codec.decode(codec.encode(notificationMessage('process/output', output)));
      decodeParams('process/output', message.params);
    },
    frame: (codec) => codec.encode(notificationMessage('process/output', output)),
  },
  {
    name: `ReadResponse ${READ_CHUNKS} x 4 KiB chunks`,
    payloadBytes: READ_CHUNKS * READ_CHUNK_BYTES,
    roundTrip: (codec) => () => {
      const message = codec.decode(codec.encode(responseMessage(3, read)));
      decodeResult('process/read', message.result);
    },
    frame: (codec) => codec.encode(responseMessage(3, read)),
  },
];

const figures = [];
for (const c of cases) {
  // Sanity: both codecs give back the bytes that went in.
  for (const codec of Object.values(codecs)) {
    const check = codec.decode(c.frame(codec));
    if (check.kind !== 'notification' && check.kind !== 'response')
      throw new Error(`${c.name}: bad round trip`);
  }
  const ops = compareOpsPerSecond({ msgpack: c.roundTrip(codecs.msgpack), json: c.roundTrip(codecs.json) });
  const mbps = (opsPerSec) => (opsPerSec * c.payloadBytes) / 1e6;
  console.log(
    `${c.name}: msgpack ${mbps(ops.msgpack).toFixed(1)} MB/s, json ${mbps(ops.json).toFixed(1)} MB/s`,
  );
  figures.push(
    figure({
      figure: `${c.name}: encode+decode+validate`,
      execd: mbps(ops.msgpack),
      baseline: mbps(ops.json),
      unit: 'MB/s',
      baselineName: 'json codec (base64 bytes)',
    }),
    figure({
      figure: `${c.name}: frame size`,
      execd: c.frame(codecs.msgpack).byteLength,
      baseline: c.frame(codecs.json).byteLength,
      unit: 'bytes',
      baselineName: 'json codec (base64 bytes)',
    }),
  );
}

emit('protocol codecs (msgpack vs json)', figures);
