import { refused } from './fs-errors.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PAD = 61; // '='

/**
 * Why `text` is not canonical padded base64, in the words of the original's decoder (Rust's
 * `base64` crate): `Invalid symbol 33, offset 0.`, `Invalid padding`, `Invalid input length: 5`,
 * `Invalid last symbol 108, offset 2.`. Undefined when it is valid.
 */
export function base64Problem(text: string): string | undefined {
  const bytes = Buffer.from(text, 'latin1');
  for (const [offset, byte] of bytes.entries())
    if (byte !== PAD && !ALPHABET.includes(String.fromCharCode(byte)))
      return `Invalid symbol ${byte}, offset ${offset}.`;
  const firstPad = bytes.indexOf(PAD);
  const symbols = firstPad < 0 ? bytes.length : firstPad;
  const pads = bytes.length - symbols;
  if (pads > 0 && bytes.subarray(firstPad).some((byte) => byte !== PAD))
    return `Invalid symbol ${PAD}, offset ${firstPad}.`;
  const rest = symbols % 4;
  if (rest === 0 || rest === 1) {
    if (pads > 0) return `Invalid symbol ${PAD}, offset ${firstPad}.`;
    if (rest === 1) return `Invalid input length: ${bytes.length}`;
    return undefined;
  }
  const needed = 4 - rest;
  if (pads > needed) return `Invalid symbol ${PAD}, offset ${firstPad}.`;
  if (pads < needed) return 'Invalid padding';
  // The unused low bits of the last symbol must be zero (canonical encoding).
  const last = bytes[symbols - 1]!;
  const value = ALPHABET.indexOf(String.fromCharCode(last));
  if ((value & (rest === 2 ? 0x0f : 0x03)) !== 0)
    return `Invalid last symbol ${last}, offset ${symbols - 1}.`;
  return undefined;
}

/**
 * Decodes a base64 field the original decodes in its handler (`fs/writeFile`'s `dataBase64`):
 * bad input is -32600 `{method} requires valid base64 dataBase64: {why}`.
 */
export function decodeBase64Strict(text: string, method: string): Uint8Array {
  const problem = base64Problem(text);
  if (problem !== undefined) throw refused(`${method} requires valid base64 dataBase64: ${problem}`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}
