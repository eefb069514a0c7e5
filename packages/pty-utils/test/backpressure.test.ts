import { readFileSync } from 'node:fs';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { OUTPUT_HIGH_WATER_BYTES } from '../src/constants.ts';
import type { SpawnedProcess } from '../src/types.ts';
import { closeSpawnedAfterEach, pipe, procStat, pty, SPAWNERS, spawnFrom } from './helpers/harness.ts';

closeSpawnedAfterEach();

/** `write` on the architectures we run on (x86_64: 1, arm64: 64). */
const WRITE_SYSCALLS = new Set(['1', '64']);
/** What may sit outside our buffer while the child blocks: pipe/tty buffers and reads in flight. */
const KERNEL_AND_STREAM_SLACK_BYTES = 512 * 1024;
const FLOOD_BYTES = 16 * 1024 * 1024;
/** Event-loop turns (each with an I/O poll) the paused child must survive without progress. */
const IDLE_LOOP_TURNS = 100;

function blockedInWrite(pid: number): boolean {
  const syscall = readFileSync(`/proc/${pid}/syscall`, 'latin1').split(' ')[0] ?? '';
  return procStat(pid).state === 'S' && WRITE_SYSCALLS.has(syscall);
}

function bytesWritten(pid: number): number {
  const match = /^wchar:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'latin1'));
  return Number(match?.[1]);
}

async function writtenAfterIdleTurns(pid: number): Promise<number> {
  for (let i = 0; i < IDLE_LOOP_TURNS; i++) await nextLoopTurn();
  await waitFor(() => blockedInWrite(pid), { what: 'child blocked in write()' });
  return bytesWritten(pid);
}

async function expectHeldThenReleased(proc: SpawnedProcess): Promise<void> {
  // Nobody reads: the child gets past the high mark, then blocks in write() and stays there.
  await waitFor(() => blockedInWrite(proc.pid) && bytesWritten(proc.pid) >= OUTPUT_HIGH_WATER_BYTES, {
    what: 'child blocked in write() past the high mark',
  });
  // Let reads already in flight settle, then give the event loop many more I/O polls: paused, not one
  // more byte may be read (so the child cannot write one more); unpaused, each poll would read some.
  const settled = await writtenAfterIdleTurns(proc.pid);
  expect(settled).toBeLessThanOrEqual(OUTPUT_HIGH_WATER_BYTES + KERNEL_AND_STREAM_SLACK_BYTES);
  expect(await writtenAfterIdleTurns(proc.pid)).toBe(settled);
  // Once read, everything arrives and the child finishes.
  let total = 0;
  for await (const chunk of proc.output()) total += chunk.bytes.length;
  expect(total).toBe(FLOOD_BYTES);
  expect((await proc.closed).exitCode).toBe(0);
}

describe.skipIf(process.platform !== 'linux')('backpressure', () => {
  test('pauses a pipe child above the high-water mark and resumes it when read', async () => {
    await using proc = await pipe(['head', '-c', String(FLOOD_BYTES), '/dev/zero']);
    await expectHeldThenReleased(proc);
  });

  test('pauses a PTY child above the high-water mark and resumes it when read', async () => {
    await using proc = await pty(['head', '-c', String(FLOOD_BYTES), '/dev/zero']);
    await expectHeldThenReleased(proc);
  });

  test('a consumer that stops reading early no longer holds the child', async () => {
    await using proc = await pipe(['head', '-c', String(FLOOD_BYTES), '/dev/zero']);
    for await (const _ of proc.output()) break;
    expect(await proc.closed).toEqual({ exitCode: 0, signal: null });
  });
});

describe.skipIf(process.platform !== 'linux')('backpressure on pipes a fork server made', () => {
  spawnFrom(SPAWNERS[1]);
  test('pauses the child above the high-water mark and resumes it when read', async () => {
    await using proc = await pipe(['head', '-c', String(FLOOD_BYTES), '/dev/zero']);
    await expectHeldThenReleased(proc);
  });
});
