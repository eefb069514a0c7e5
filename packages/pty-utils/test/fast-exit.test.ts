import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import type { SpawnedProcess } from '../src/types.ts';
import { closeSpawnedAfterEach, pipe, pty, SPAWNERS, spawnFrom } from './helpers/harness.ts';

closeSpawnedAfterEach();

const ONE_MIB = 1024 * 1024;
/** Runs per mode: the race between the child's exit and its last bytes must never be lost. */
const FAST_RUNS = 200;
/** Runs with a consumer that yields between chunks, so output is paused and resumed around the exit. */
const SLOW_RUNS = 20;
/** Children in flight at once: more load makes the exit/drain race more likely to show. */
const PARALLEL = 4;

const ZEROS = new Uint8Array(64 * 1024);

async function countBytes(proc: SpawnedProcess, slow: boolean): Promise<{ bytes: number; nonZero: number }> {
  let bytes = 0;
  let nonZero = 0;
  for await (const chunk of proc.output()) {
    bytes += chunk.bytes.length;
    // memcmp against zeros: a per-byte JS loop over 400 MiB would dominate the test's time.
    if (Buffer.compare(chunk.bytes, ZEROS.subarray(0, chunk.bytes.length)) !== 0) nonZero += 1;
    if (slow) await nextMacrotask();
  }
  return { bytes, nonZero };
}

async function runMany(spawn: () => Promise<SpawnedProcess>, runs: number, slow: boolean): Promise<number[]> {
  const lost: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs) {
      next += 1;
      await using proc = await spawn();
      const { bytes, nonZero } = await countBytes(proc, slow);
      const status = await proc.closed;
      if (bytes !== ONE_MIB || nonZero !== 0 || status.exitCode !== 0) lost.push(bytes);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return lost;
}

// `head` writes 1 MiB of NUL bytes (unchanged by the tty's output processing) and exits at once.
const argv = ['head', '-c', String(ONE_MIB), '/dev/zero'];

describe('a child that prints 1 MiB and exits at once', () => {
  test(`delivers every byte in a PTY, ${FAST_RUNS} runs in a row`, { timeout: 120_000 }, async () => {
    expect(await runMany(() => pty(argv), FAST_RUNS, false)).toEqual([]);
  });

  test(`delivers every byte on pipes, ${FAST_RUNS} runs in a row`, { timeout: 120_000 }, async () => {
    expect(await runMany(() => pipe(argv), FAST_RUNS, false)).toEqual([]);
  });

  test('delivers every byte to a slow consumer (pause/resume around the exit)', {
    timeout: 120_000,
  }, async () => {
    expect(await runMany(() => pty(argv), SLOW_RUNS, true)).toEqual([]);
    expect(await runMany(() => pipe(argv), SLOW_RUNS, true)).toEqual([]);
  });
});

describe('a child on pipes a fork server made prints 1 MiB and exits at once', () => {
  spawnFrom(SPAWNERS[1]);
  test(`delivers every byte, ${FAST_RUNS} runs in a row, and to a slow consumer`, {
    timeout: 120_000,
  }, async () => {
    expect(await runMany(() => pipe(argv), FAST_RUNS, false)).toEqual([]);
    expect(await runMany(() => pipe(argv), SLOW_RUNS, true)).toEqual([]);
  });
});
