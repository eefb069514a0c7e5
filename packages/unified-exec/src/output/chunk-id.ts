import { CHUNK_ID_LENGTH } from '../constants.ts';

/**
 * A fresh chunk id: 6 random lowercase hex digits, as the original draws them (each digit
 * uniformly from 0..16). `randomBytes` is injectable so tests can pin the value.
 */
export function generateChunkId(randomBytes: (length: number) => Uint8Array = defaultRandomBytes): string {
  const bytes = randomBytes(CHUNK_ID_LENGTH);
  let id = '';
  for (let i = 0; i < CHUNK_ID_LENGTH; i++) id += ((bytes[i] ?? 0) & 0x0f).toString(16);
  return id;
}

function defaultRandomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length));
}
