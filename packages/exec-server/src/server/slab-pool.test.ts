import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { SlabPool } from './slab-pool.ts';

const KIB = 1024;

test('a slab is taken from those kept: its size, else a larger one, else a new one', () => {
  const pool = new SlabPool([64 * KIB, 256 * KIB], 1024 * KIB, 60_000);
  const small = pool.take(64 * KIB);
  const large = pool.take(256 * KIB);
  pool.give(small);
  pool.give(large);
  expect(pool.bytes).toBe(320 * KIB);
  expect(pool.take(64 * KIB)).toBe(small);
  // None of 64 KiB left: the larger one serves.
  expect(pool.take(64 * KIB)).toBe(large);
  expect(pool.bytes).toBe(0);
  const fresh = pool.take(64 * KIB);
  expect(fresh).not.toBe(small);
  expect(fresh.byteLength).toBe(64 * KIB);
  expect(pool.sizeFor(100 * KIB)).toBe(256 * KIB);
  expect(pool.sizeFor(300 * KIB)).toBeUndefined();
});

test('only whole slabs of a kept size are kept, up to the bound per size', () => {
  const pool = new SlabPool([64 * KIB], 128 * KIB, 60_000);
  pool.give(Buffer.allocUnsafeSlow(32 * KIB));
  // A view into a larger buffer is not a slab of its own.
  pool.give(Buffer.allocUnsafeSlow(128 * KIB).subarray(0, 64 * KIB));
  expect(pool.bytes).toBe(0);
  for (let i = 0; i < 3; i++) pool.give(Buffer.allocUnsafeSlow(64 * KIB));
  expect(pool.bytes).toBe(128 * KIB);
});

test('what is kept is let go once no slab was taken for the idle time', async () => {
  const pool = new SlabPool([64 * KIB], 1024 * KIB, 40);
  pool.give(Buffer.allocUnsafeSlow(64 * KIB));
  pool.give(Buffer.allocUnsafeSlow(64 * KIB));
  // Taken from meanwhile: kept through the first check.
  await sleep(20);
  pool.give(pool.take(64 * KIB));
  await sleep(30);
  expect(pool.bytes).toBe(128 * KIB);
  await sleep(120);
  expect(pool.bytes).toBe(0);
});
