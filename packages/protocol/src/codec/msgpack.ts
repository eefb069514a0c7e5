import { Decoder, Encoder } from '@msgpack/msgpack';
import { FrameDecodeError } from '../errors.ts';
import type { DecodeLimits } from './limits.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function fail(message: string): never {
  throw new FrameDecodeError('invalidRequest', `invalid msgpack frame: ${message}`);
}

/**
 * Walks a msgpack frame's headers without allocating its values and enforces the limits: every
 * declared length fits in the remaining bytes and under its cap (so a header claiming a 4 GiB bin
 * is refused at once), nesting depth, total values, string map keys (valid UTF-8, no duplicates),
 * no ext types, and exactly one top-level value. Runs in time linear in the frame's length.
 */
function scanMsgpack(bytes: Uint8Array, limits: DecodeLimits): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let pos = 0;
  let values = 0;
  // One entry per open container: items still to read (a map counts keys and values), and for
  // maps the keys seen so far plus whether the next item is a key.
  const stack: { remaining: number; keys: Set<string> | null; keyNext: boolean }[] = [];

  const need = (n: number): void => {
    if (pos + n > end) fail('truncated');
  };
  const u8 = (): number => {
    need(1);
    return bytes[pos++]!;
  };
  const u16 = (): number => {
    need(2);
    const v = view.getUint16(pos);
    pos += 2;
    return v;
  };
  const u32 = (): number => {
    need(4);
    const v = view.getUint32(pos);
    pos += 4;
    return v;
  };
  const skip = (n: number): void => {
    need(n);
    pos += n;
  };
  const open = (count: number, map: boolean): void => {
    if (stack.length >= limits.maxDepth) fail(`nesting deeper than ${limits.maxDepth}`);
    const items = map ? count * 2 : count;
    // Each item needs at least one byte: refuse impossible counts before anything allocates them.
    if (items > end - pos) fail('container length exceeds the frame');
    if (count > limits.maxValues) fail('container length exceeds the value limit');
    if (items > 0) stack.push({ remaining: items, keys: map ? new Set() : null, keyNext: map });
  };

  if (end === 0) fail('empty frame');
  do {
    const parent = stack[stack.length - 1];
    let atKey = false;
    if (parent) {
      parent.remaining--;
      if (parent.keys) {
        atKey = parent.keyNext;
        parent.keyNext = !parent.keyNext;
      }
    }
    const type = u8();
    // Count as the original counts JSON values: the root, elements and map values, not keys.
    if (!atKey && ++values > limits.maxValues) fail(`more than ${limits.maxValues} values`);

    let strLength = -1;
    if (type <= 0x7f || type >= 0xe0) {
      // fixint
    } else if (type >= 0x80 && type <= 0x8f) open(type & 0x0f, true);
    else if (type >= 0x90 && type <= 0x9f) open(type & 0x0f, false);
    else if (type >= 0xa0 && type <= 0xbf) strLength = type & 0x1f;
    else {
      switch (type) {
        case 0xc0: // nil
        case 0xc2: // false
        case 0xc3: // true
          break;
        case 0xc4:
        case 0xc5:
        case 0xc6: {
          const length = type === 0xc4 ? u8() : type === 0xc5 ? u16() : u32();
          if (length > limits.maxBinLength) fail(`bin of ${length} bytes exceeds ${limits.maxBinLength}`);
          skip(length);
          break;
        }
        case 0xca:
          skip(4);
          break;
        case 0xcb:
          skip(8);
          break;
        case 0xcc:
        case 0xd0:
          skip(1);
          break;
        case 0xcd:
        case 0xd1:
          skip(2);
          break;
        case 0xce:
        case 0xd2:
          skip(4);
          break;
        case 0xcf:
        case 0xd3:
          skip(8);
          break;
        case 0xd9:
          strLength = u8();
          break;
        case 0xda:
          strLength = u16();
          break;
        case 0xdb:
          strLength = u32();
          break;
        case 0xdc:
          open(u16(), false);
          break;
        case 0xdd:
          open(u32(), false);
          break;
        case 0xde:
          open(u16(), true);
          break;
        case 0xdf:
          open(u32(), true);
          break;
        default:
          // 0xc1 is never used; 0xc7-0xc9 and 0xd4-0xd8 are ext types, which the protocol never sends.
          fail(`unsupported type byte 0x${type.toString(16)}`);
      }
    }
    if (strLength >= 0) {
      if (strLength > limits.maxStringLength)
        fail(`string of ${strLength} bytes exceeds ${limits.maxStringLength}`);
      need(strLength);
      if (atKey) {
        let key: string;
        try {
          key = utf8.decode(bytes.subarray(pos, pos + strLength));
        } catch {
          fail('map key is not valid UTF-8');
        }
        if (parent!.keys!.has(key))
          throw new FrameDecodeError('invalidRequest', `duplicate msgpack map key \`${key}\``);
        parent!.keys!.add(key);
      }
      pos += strLength;
    } else if (atKey) {
      fail('map keys must be strings');
    }
    while (stack.length > 0 && stack[stack.length - 1]!.remaining === 0) stack.pop();
  } while (stack.length > 0);
  if (pos !== end) fail('trailing bytes after the message');
}

// One library decoder per limits object: creating one per frame costs more than small frames do.
const decoders = new WeakMap<DecodeLimits, Decoder>();
function decoderFor(limits: DecodeLimits): Decoder {
  let decoder = decoders.get(limits);
  if (!decoder) {
    decoder = new Decoder({
      maxStrLength: limits.maxStringLength,
      maxBinLength: limits.maxBinLength,
      maxArrayLength: limits.maxValues,
      maxMapLength: limits.maxValues,
      maxExtLength: 0,
    });
    decoders.set(limits, decoder);
  }
  return decoder;
}

/**
 * Decodes one msgpack frame into a plain value, enforcing the limits. A `bin` becomes a
 * `Uint8Array` that is a view into `frame` (no copy): the frame must not be reused afterwards.
 */
export function decodeMsgpack(frame: Uint8Array, limits: DecodeLimits): unknown {
  if (frame.byteLength > limits.maxFrameBytes) {
    throw new FrameDecodeError(
      'invalidRequest',
      `msgpack message of ${frame.byteLength} bytes exceeds maximum length of ${limits.maxFrameBytes} bytes`,
    );
  }
  scanMsgpack(frame, limits);
  const decoder = decoderFor(limits);
  try {
    return decoder.decode(frame);
  } catch (cause) {
    throw new FrameDecodeError('invalidRequest', `invalid msgpack frame: ${(cause as Error).message}`, {
      cause,
    });
  }
}

const encoder = new Encoder({ ignoreUndefined: true });

/**
 * Encodes a wire object as msgpack; `Uint8Array` values (Node Buffers included) become `bin`,
 * `undefined` members are left out. Returns a fresh copy, so frames can be queued safely.
 */
export function encodeMsgpack(message: unknown): Uint8Array {
  return encoder.encode(message);
}
