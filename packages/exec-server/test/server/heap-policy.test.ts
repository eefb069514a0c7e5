import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { type BuiltCli, buildCliFromSource, CliChild, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildCli } from '../helpers/cli.ts';

const MiB = 1024 * 1024;
const run = promisify(execFile);
let probe: BuiltCli;
let cli: BuiltCli;

beforeAll(async () => {
  [probe, cli] = await Promise.all([
    buildCliFromSource({
      packageDir: resolve(import.meta.dirname, '../..'),
      entry: 'test/helpers/heap-policy-probe.ts',
      name: 'heap-policy-probe',
    }),
    buildCli(),
  ]);
}, 60_000);

afterAll(async () => {
  await probe?.remove();
  await cli?.remove();
});

async function runProbe(mode: 'policy' | 'none') {
  const { stdout } = await run(process.execPath, [probe.script, mode], { timeout: 60_000 });
  return JSON.parse(stdout) as {
    youngGenerationBytes: number;
    cappedAtBytes: number | null;
    collections: number;
    heapBefore: number;
    heapAfter: number;
  };
}

describe('heap policy (a process of its own)', () => {
  it('caps the young generation where V8 would grow it to 32 MiB', async () => {
    const [none, policy] = await Promise.all([runProbe('none'), runProbe('policy')]);
    // The control shows the workload does grow it: the cap is what holds it back.
    expect(none.youngGenerationBytes).toBeGreaterThanOrEqual(16 * MiB);
    // Checked after each collection, between turns: it may pass the cap by one doubling.
    expect(policy.cappedAtBytes).toBeGreaterThanOrEqual(4 * MiB);
    expect(policy.cappedAtBytes).toBeLessThanOrEqual(8 * MiB);
    expect(policy.youngGenerationBytes).toBe(policy.cappedAtBytes);
  }, 90_000);

  it('collects the garbage of a burst of large frames on the next turn', async () => {
    const [none, policy] = await Promise.all([runProbe('none'), runProbe('policy')]);
    expect(none.collections).toBe(0);
    expect(policy.collections).toBe(1);
    expect(policy.heapBefore).toBeGreaterThan(32 * MiB);
    expect(policy.heapBefore - policy.heapAfter).toBeGreaterThan(24 * MiB);
  }, 90_000);
});

describe('execd-server under a burst of large hostile frames', () => {
  it('logs its collections and goes on serving', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'ws://127.0.0.1:0', '--log-level', 'debug'], {
      stderrTailChars: 200_000,
    });
    const socket = new WebSocket(await server.firstLine());
    await new Promise((done, fail) => socket.once('open', done).once('error', fail));
    const answers: { id?: unknown; error?: { message?: string }; result?: unknown }[] = [];
    socket.on('message', (data) => answers.push(JSON.parse(data.toString())));
    const until = async (count: number) => {
      while (answers.length < count) await new Promise((done) => socket.once('message', done));
    };
    socket.send(JSON.stringify({ id: 0, method: 'initialize', params: { clientName: 'heap-test' } }));
    await until(1);
    socket.send(JSON.stringify({ method: 'initialized' }));
    // 48 refused writes of 256 KiB each (12 MiB): past the 8 MiB that triggers a collection.
    const chunk = 'A'.repeat(256 * 1024);
    for (let id = 1; id <= 48; id++)
      socket.send(JSON.stringify({ id, method: 'process/write', params: { processId: 'nope', chunk } }));
    await until(49);
    expect(answers.slice(1).every((answer) => answer.error !== undefined)).toBe(true);
    const line = await waitFor(
      () => server.logRecords().find((record) => record.msg === 'heap collected after large frames'),
      { what: 'the log line of a collection' },
    );
    expect(line.pauseMs).toBeGreaterThanOrEqual(0);
    expect(line.heapUsedBytes).toBeGreaterThan(0);
    // Still serving, on the same connection.
    socket.send(JSON.stringify({ id: 100, method: 'fs/getMetadata', params: { path: 'file:///' } }));
    await until(50);
    expect(answers[49]).toMatchObject({ id: 100, result: { isDirectory: true } });
    socket.close();
  }, 60_000);
});

/** A status field of a live process, in bytes (`VmHWM`: its peak resident memory so far). */
function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url.replace(/^ws/, 'http')}/metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!match) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}

async function openInitialized(url: string) {
  const socket = new WebSocket(url);
  await new Promise((done, fail) => socket.once('open', done).once('error', fail));
  type Answer = { id?: unknown; error?: { message?: string }; result?: unknown };
  const pending = new Map<unknown, (answer: Answer) => void>();
  socket.on('message', (data) => {
    const answer = JSON.parse(data.toString()) as Answer;
    pending.get(answer.id)?.(answer);
    pending.delete(answer.id);
  });
  const request = (message: { id: string | number; method: string; params: unknown }) =>
    new Promise<Answer>((done) => {
      pending.set(message.id, done);
      socket.send(JSON.stringify(message));
    });
  await request({ id: 'init', method: 'initialize', params: { clientName: 'frame-bound-test' } });
  socket.send(JSON.stringify({ method: 'initialized' }));
  return { socket, request };
}

describe('execd-server under large frames from many connections at once', () => {
  it('receives them within its bound, answers every one, and small requests never wait', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'ws://127.0.0.1:0']);
    const url = await server.firstLine();
    const senders = 16;
    const frameBytes = 8 * MiB;
    const clients = await Promise.all(Array.from({ length: senders }, () => openInitialized(url)));
    const small = await openInitialized(url);
    const before = statusBytes(server.pid, 'VmHWM');
    const chunk = 'A'.repeat(frameBytes);
    // All at once: without a bound the server would hold every frame whole (128 MiB) at once.
    const answers = Promise.all(
      clients.map(({ request }, i) =>
        request({ id: i, method: 'process/write', params: { processId: `nope-${i}`, chunk } }),
      ),
    );
    let smallAnswered = 0;
    let done = false;
    void answers.finally(() => {
      done = true;
    });
    while (!done) {
      const answer = await small.request({
        id: `s${smallAnswered}`,
        method: 'environment/status',
        params: {},
      });
      expect(answer.result).toEqual({ status: 'ready' });
      smallAnswered += 1;
    }
    for (const answer of await answers) expect(answer.error).toBeDefined();
    expect(smallAnswered).toBeGreaterThan(0);
    // What the machine sees: the server's peak resident memory grew by less than the frames.
    const grown = statusBytes(server.pid, 'VmHWM') - before;
    expect(grown).toBeLessThan(senders * frameBytes);
    const peak = await metricValue(url, 'execd_inbound_large_frame_peak_bytes');
    const waits = await metricValue(url, 'execd_inbound_large_frame_waits_total');
    // 16 MiB of budget, the oldest frame whole, and per waiting connection what it read before
    // it stopped (256 KiB plus one socket read).
    expect(peak).toBeGreaterThanOrEqual(frameBytes);
    expect(peak).toBeLessThanOrEqual(16 * MiB + frameBytes + senders * 320 * 1024);
    expect(waits).toBeGreaterThan(0);
    expect(await metricValue(url, 'execd_inbound_large_frame_bytes')).toBe(0);
    for (const { socket } of [...clients, small]) socket.close();
  }, 120_000);
});

/** Starts one text frame of `declaredBytes` and sends only its first `sentBytes`, then stalls. */
async function stallInLargeFrame(url: string, declaredBytes: number, sentBytes: number): Promise<WebSocket> {
  const socket = new WebSocket(url);
  await new Promise((done, fail) => socket.once('open', done).once('error', fail));
  const header = Buffer.alloc(14);
  header[0] = 0x81; // FIN, text
  header[1] = 0x80 | 127; // masked, 64-bit length
  header.writeBigUInt64BE(BigInt(declaredBytes), 2); // mask key 0: the payload goes as is
  const start = '{"id":1,"method":"process/write","params":{"processId":"x","chunk":"';
  const payload = Buffer.alloc(sentBytes, 'A');
  payload.write(start);
  (socket as unknown as { _socket: Socket })._socket.write(Buffer.concat([header, payload]));
  return socket;
}

describe('execd-server with peers that start large frames and stall', () => {
  it('gives their room to the large frames of others', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'ws://127.0.0.1:0']);
    const url = await server.firstLine();
    // 64 x 320 KiB: more than the 16 MiB the large frames arriving may hold together.
    const stalled = await Promise.all(
      Array.from({ length: 64 }, () => stallInLargeFrame(url, 8 * MiB, 320 * 1024)),
    );
    await waitFor(async () => (await metricValue(url, 'execd_inbound_large_frame_bytes')) >= 15 * MiB, {
      what: 'the stalled frames to fill the bound',
    });
    const client = await openInitialized(url);
    const answer = await client.request({
      id: 'w',
      method: 'process/write',
      params: { processId: 'nope', chunk: 'A'.repeat(2 * MiB) },
    });
    expect(answer.error?.message).toBeDefined();
    expect(await metricValue(url, 'execd_inbound_large_frame_stalls_total')).toBeGreaterThan(0);
    // The stalled connections are still there (only their room was taken).
    expect(stalled.every((socket) => socket.readyState === WebSocket.OPEN)).toBe(true);
    for (const socket of [...stalled, client.socket]) socket.terminate();
  }, 60_000);
});
