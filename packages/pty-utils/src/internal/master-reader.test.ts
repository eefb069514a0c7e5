import { afterEach, describe, expect, test } from 'vitest';
import { openMasterReader, PTY_READ_BYTES } from './master-reader.ts';
import { loadNativePty } from './native-pty.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A terminal running `script` (sh); its master read through `openMasterReader`. */
function terminal(script: string) {
  const { native, helperPath } = loadNativePty();
  let exited!: () => void;
  const exit = new Promise<void>((resolve) => {
    exited = resolve;
  });
  const forked = native.fork(
    '/bin/sh',
    ['-c', script],
    ['PATH=/usr/bin:/bin'],
    '/tmp',
    80,
    24,
    -1,
    -1,
    true,
    helperPath,
    () => exited(),
  );
  const master = openMasterReader(forked.fd);
  cleanups.push(() => {
    master.destroy();
    try {
      process.kill(forked.pid, 'SIGKILL');
    } catch {}
  });
  return { master, exit };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('openMasterReader', () => {
  test('hands out what one wake-up read as one block, not one event per 4 KiB read', async () => {
    // 48 KiB wait in the terminal before anyone reads (the stream starts on its first listener).
    const { master } = terminal('head -c 49152 /dev/zero | tr "\\0" x; sleep 5');
    await sleep(500);
    const blocks: Uint8Array[] = [];
    master.on('data', (bytes: Uint8Array) => blocks.push(bytes));
    for (let waited = 0; blocks.reduce((sum, b) => sum + b.length, 0) < 49152 && waited < 5_000; waited += 20)
      await sleep(20);
    const text = Buffer.concat(blocks).toString('latin1');
    expect(text).toBe('x'.repeat(49152));
    // One event per read would be at least 49152 / 4095 = 13 events of at most 4,095 bytes.
    expect(blocks.length).toBeLessThan(12);
    expect(Math.max(...blocks.map((b) => b.length))).toBeGreaterThan(PTY_READ_BYTES);
  });

  test('every byte read comes before the end of the stream', async () => {
    const { master, exit } = terminal('head -c 200000 /dev/zero | tr "\\0" y');
    const events: string[] = [];
    let bytes = 0;
    master.on('data', (chunk: Uint8Array) => {
      bytes += chunk.length;
      events.push('data');
    });
    const ended = new Promise<void>((resolve) => {
      for (const event of ['end', 'error', 'close']) {
        master.once(event, () => {
          events.push(event);
          resolve();
        });
      }
    });
    await exit;
    await ended;
    // What libuv left for the synchronous drain after EOF is the caller's (see `drainMaster`);
    // here only the order matters: no data event after the stream's end.
    const firstEnd = events.findIndex((event) => event !== 'data');
    expect(events.slice(firstEnd).includes('data')).toBe(false);
    expect(bytes).toBeGreaterThan(0);
  });
});
