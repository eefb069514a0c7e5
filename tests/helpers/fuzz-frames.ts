// Frames for the fuzz suite: valid messages of every method, byte-level mutations of them, random
// bytes and text, structurally valid messages with random content, and a few hand-made nasty ones.
import {
  type Codec,
  createJsonCodec,
  createMsgpackCodec,
  notificationMessage,
  type RpcMessage,
  requestMessage,
  responseMessage,
} from '@execd/protocol';
import fc from 'fast-check';
import type { Rng } from './rng.ts';

/** One frame to send: bytes or text, as a WebSocket binary or text frame. */
export interface FuzzFrame {
  readonly data: Uint8Array | string;
  readonly binary: boolean;
  readonly kind: string;
}

const CODECS: Readonly<Record<'json' | 'msgpack', Codec>> = {
  json: createJsonCodec(),
  msgpack: createMsgpackCodec(),
};

const METHODS = [
  'initialize',
  'process/start',
  'process/read',
  'process/write',
  'process/signal',
  'process/terminate',
  'process/resize',
  'process/list',
  'environment/info',
  'environment/status',
  'fs/readFile',
  'no/such-method',
] as const;

/** Commands a fuzzer may start: harmless whatever happens to the rest of the message. */
const SAFE_ARGV: readonly (readonly string[])[] = [
  ['/bin/true'],
  ['/bin/echo', 'fuzz'],
  ['/nonexistent/fuzz'],
];

/** A valid-looking request for `method`, with ids and process ids from the fuzzer's small pool. */
function validRequest(rng: Rng, method: (typeof METHODS)[number]): RpcMessage {
  const processId = `fz-${rng.int(8)}`;
  const id = rng.int(1_000);
  const params: Record<string, unknown> = {
    initialize: { clientName: 'fuzz', ...(rng.chance(0.2) ? { resumeSessionId: crypto.randomUUID() } : {}) },
    'process/start': {
      processId,
      argv: [...rng.pick(SAFE_ARGV)],
      cwd: 'file:///tmp',
      env: { PATH: '/usr/bin:/bin' },
      tty: rng.chance(0.3),
      pipeStdin: rng.chance(0.5),
    },
    'process/read': {
      processId,
      afterSeq: rng.int(5),
      maxBytes: rng.chance(0.5) ? rng.int(9000) + 1 : null,
      waitMs: rng.int(3) * 10,
    },
    'process/write': { processId, chunk: rng.bytes(rng.int(32)), writeId: `w${rng.int(100)}` },
    'process/signal': { processId, signal: 'interrupt' },
    'process/terminate': { processId },
    'process/resize': { processId, cols: rng.int(300) + 1, rows: rng.int(100) + 1 },
    'process/list': {},
    'environment/info': {},
    'environment/status': {},
    'fs/readFile': { path: 'file:///etc/hostname' },
    'no/such-method': { x: 1 },
  }[method];
  return requestMessage(id, method, params);
}

/** Applies 1-4 random byte-level edits. */
function mutate(rng: Rng, input: Uint8Array): Uint8Array {
  let bytes = Uint8Array.from(input);
  const edits = 1 + rng.int(4);
  for (let i = 0; i < edits; i++) {
    const at = bytes.length === 0 ? 0 : rng.int(bytes.length);
    switch (rng.int(8)) {
      case 0: // flip a bit
        if (bytes.length > 0) bytes[at] = bytes[at]! ^ (1 << rng.int(8));
        break;
      case 1: // replace a byte
        if (bytes.length > 0) bytes[at] = rng.int(256);
        break;
      case 2: // truncate
        bytes = bytes.subarray(0, at);
        break;
      case 3: {
        // delete a range
        const end = Math.min(bytes.length, at + 1 + rng.int(16));
        bytes = Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(end)]);
        break;
      }
      case 4: // insert random bytes
        bytes = Uint8Array.from([
          ...bytes.subarray(0, at),
          ...rng.bytes(1 + rng.int(16)),
          ...bytes.subarray(at),
        ]);
        break;
      case 5: {
        // duplicate a slice
        const slice = bytes.subarray(at, at + 1 + rng.int(32));
        bytes = Uint8Array.from([
          ...bytes.subarray(0, at),
          ...slice,
          ...slice,
          ...bytes.subarray(at + slice.length),
        ]);
        break;
      }
      case 6: {
        // a msgpack header claiming a huge length (bin32, str32, array32, map32)
        const header = rng.pick([0xc6, 0xdb, 0xdd, 0xdf]);
        bytes = Uint8Array.from([
          ...bytes.subarray(0, at),
          header,
          0xff,
          0xff,
          0xff,
          rng.int(256),
          ...bytes.subarray(at),
        ]);
        break;
      }
      default: // a reserved/ext msgpack byte or a JSON structural character
        if (bytes.length > 0)
          bytes[at] = rng.pick([0xc1, 0xd4, 0xc7, 0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x5c, 0x00]);
    }
  }
  return bytes;
}

/** Hand-made frames at and over the decoder's limits. */
function nastyFrame(rng: Rng): FuzzFrame {
  switch (rng.int(6)) {
    case 0: {
      const depth = rng.pick([126, 127, 128, 1_000, 20_000]);
      return { data: `${'['.repeat(depth)}${']'.repeat(depth)}`, binary: false, kind: 'deep-json' };
    }
    case 1: {
      const depth = rng.pick([127, 128, 5_000]);
      const bytes = new Uint8Array(depth + 1).fill(0x91);
      bytes[depth] = 0xc0;
      return { data: bytes, binary: true, kind: 'deep-msgpack' };
    }
    case 2:
      return {
        data: `{"id":1,"method":"process/list","params":{"a":[${'0,'.repeat(300_000)}0]}}`,
        binary: false,
        kind: 'many-values',
      };
    case 3:
      return {
        data: '{"id":1,"method":"initialize","method":"x","params":{}}',
        binary: false,
        kind: 'duplicate-key',
      };
    case 4:
      return {
        data: Uint8Array.from([0xdd, 0xff, 0xff, 0xff, 0xff]),
        binary: true,
        kind: 'huge-array-header',
      };
    default:
      return { data: `"${'\\ud800'.repeat(rng.int(50))}"`, binary: false, kind: 'lone-surrogates' };
  }
}

const randomValue = fc.oneof(fc.jsonValue(), fc.anything({ maxDepth: 4 }));

/** A structurally valid message (an object) with random content in `codec`. */
function randomMessage(rng: Rng, codec: Codec): FuzzFrame {
  const [params] = fc.sample(randomValue, { numRuns: 1, seed: rng.int(2 ** 31) });
  const method = rng.chance(0.8)
    ? rng.pick(METHODS)
    : rng.pick(['initialized', 'process/output', '', 'x'.repeat(300)]);
  let message: RpcMessage;
  switch (rng.int(4)) {
    case 0:
      message = notificationMessage(method, params);
      break;
    case 1: // a "response" from the client: the server must close the connection, not crash
      message = responseMessage(rng.int(10), params);
      break;
    default:
      message = requestMessage(rng.chance(0.9) ? rng.int(1000) : `s${rng.int(10)}`, method, params);
  }
  try {
    const data = codec.encode(message);
    return { data, binary: codec.binary, kind: `random-${codec.name}` };
  } catch {
    return { data: '{}', binary: false, kind: 'random-unencodable' };
  }
}

/**
 * The next fuzz frame for a connection speaking `codecName` (mostly; a few frames switch codec).
 * Mix: 25% valid, 35% mutated valid, 15% random bytes/text, 20% random structured, 5% nasty.
 */
export function nextFuzzFrame(rng: Rng, codecName: 'json' | 'msgpack'): FuzzFrame {
  const codec = rng.chance(0.9) ? CODECS[codecName] : CODECS[codecName === 'json' ? 'msgpack' : 'json'];
  const roll = rng.next();
  if (roll < 0.25) {
    return { data: codec.encode(validRequest(rng, rng.pick(METHODS))), binary: codec.binary, kind: 'valid' };
  }
  if (roll < 0.6) {
    const data = mutate(rng, codec.encode(validRequest(rng, rng.pick(METHODS))));
    return { data, binary: codec.binary || rng.chance(0.2), kind: `mutated-${codec.name}` };
  }
  if (roll < 0.75) {
    const length = rng.chance(0.05) ? 64 * 1024 + rng.int(256 * 1024) : rng.int(2048);
    return rng.chance(0.5)
      ? { data: rng.bytes(length), binary: true, kind: 'random-bytes' }
      : { data: Buffer.from(rng.bytes(length)).toString('latin1'), binary: false, kind: 'random-text' };
  }
  if (roll < 0.95) return randomMessage(rng, codec);
  return nastyFrame(rng);
}

/** The handshake frames (`initialize`, `initialized`) in `codec`. */
export function handshakeFrames(codecName: 'json' | 'msgpack'): FuzzFrame[] {
  const codec = CODECS[codecName];
  return [
    {
      data: codec.encode(requestMessage(0, 'initialize', { clientName: 'fuzz' })),
      binary: codec.binary,
      kind: 'handshake',
    },
    { data: codec.encode(notificationMessage('initialized', {})), binary: codec.binary, kind: 'handshake' },
  ];
}
