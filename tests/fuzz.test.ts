// Fuzz: mutated and random frames in both codecs against a live execd-server CLI. The server
// never crashes (and logs no error), its memory stays bounded, and a healthy process in another
// session keeps streaming correctly throughout. `npm test`: 3,000 frames; `pnpm test:stress`: 100,000.
import { ExecServerClient } from '@execd/exec-client';
import { createJsonCodec, createMsgpackCodec, requestMessage } from '@execd/protocol';
import { rssBytes, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { CliServer } from './helpers/cli-server.ts';
import { collect, execParams } from './helpers/exec.ts';
import { type FuzzFrame, handshakeFrames, nextFuzzFrame } from './helpers/fuzz-frames.ts';
import { metricValue } from './helpers/in-process-server.ts';
import { Rng } from './helpers/rng.ts';
import { stressSize } from './helpers/stress.ts';

const FRAMES = stressSize(3_000, 100_000);
/** Fuzzing connections at once; each reconnects whenever the server closes it. */
const CONNECTIONS = 4;
/** Frames between two progress checks of the healthy stream. */
const CHECK_EVERY = stressSize(500, 5_000);
/** A fuzz connection waits while more than this is queued on its socket (the server reads slowly). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * Ceiling on the server's RSS growth over the run. Generous: V8 grows its heap lazily and a 2 MiB
 * frame or a 300,000-value array is decoded (and refused) now and then; a leak per frame would
 * still exceed it many times over at the stress size.
 */
const MAX_RSS_GROWTH_BYTES = 256 * 1024 * 1024;
/** Frames between two barriers (a round trip proving the server read them). */
const BARRIER_EVERY = 4;
const JSON_CODEC = createJsonCodec({ maxFrameBytes: 256 * 1024 * 1024 });
const MSGPACK = createMsgpackCodec({ maxFrameBytes: 256 * 1024 * 1024 });
/** How far the last third of a long run may rise above the middle third (GC timing noise). */
const PLATEAU_SLACK_BYTES = 64 * 1024 * 1024;
const SEED = Number(process.env.EXECD_FUZZ_SEED ?? Date.now() % 2 ** 31);

let server: CliServer;
let healthy: ExecServerClient;

beforeAll(async () => {
  // Only error-level logs: any line on stderr is a server-side failure the fuzz provoked.
  server = await CliServer.start({ args: ['--log-level', 'error', '--concurrent-requests', '4'] });
  healthy = await ExecServerClient.connect({ url: server.url, codec: 'msgpack' });
});

afterAll(async () => {
  await healthy?.close();
  await server?.kill('SIGTERM');
});

/**
 * A raw WebSocket that sends whatever it is given, and a barrier: a valid request whose answer
 * (result or error) proves the server has read every frame sent before it. Without it the frames
 * would pile up in socket buffers and die unread with the connection.
 */
class FuzzSocket {
  readonly socket: WebSocket;
  readonly #codec: 'json' | 'msgpack';
  readonly #waiting = new Map<string, () => void>();
  #barriers = 0;

  private constructor(socket: WebSocket, codec: 'json' | 'msgpack') {
    this.socket = socket;
    this.#codec = codec;
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      let id: unknown;
      try {
        id = (isBinary && data[0] !== 0x7b ? MSGPACK.decodeValue(data) : JSON_CODEC.decodeValue(data)) as {
          id?: unknown;
        };
        id = (id as { id?: unknown }).id;
      } catch {
        return;
      }
      if (typeof id === 'string') this.#waiting.get(id)?.();
    });
    socket.once('close', () => {
      for (const release of this.#waiting.values()) release();
    });
  }

  static async open(url: string, codec: 'json' | 'msgpack'): Promise<FuzzSocket> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new FuzzSocket(socket, codec);
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  async send(frame: FuzzFrame): Promise<void> {
    while (this.open && this.socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (!this.open) return;
    await new Promise<void>((resolve) =>
      this.socket.send(frame.data, { binary: frame.binary }, () => resolve()),
    );
  }

  /** Sends `environment/status` with a fresh string id and waits for its answer or the close. */
  async barrier(): Promise<void> {
    if (!this.open) return;
    const id = `barrier-${++this.#barriers}`;
    const codec = this.#codec === 'json' ? JSON_CODEC : MSGPACK;
    const answered = new Promise<void>((resolve) => this.#waiting.set(id, resolve));
    await this.send({
      data: codec.encode(requestMessage(id, 'environment/status', {})),
      binary: codec.binary,
      kind: 'barrier',
    });
    await answered;
    this.#waiting.delete(id);
  }
}

describe(`fuzz: ${FRAMES} frames, both codecs (seed ${SEED})`, () => {
  test('the server survives, stays bounded, and a healthy session keeps streaming correctly', async () => {
    // The healthy process: a counter, one line every 5 ms, followed by its own session's client.
    const counter = await healthy.start(
      execParams({
        processId: 'counter',
        argv: [process.execPath, '-e', 'let i = 0; setInterval(() => console.log(++i), 5)'],
      }),
    );
    let streamedBytes = 0;
    const followed = collect(counter, { onOutput: (bytes) => (streamedBytes += bytes) });
    await waitFor(() => streamedBytes > 0, { timeoutMs: 30_000, what: 'the healthy process to stream' });
    const rssStart = rssBytes(server.pid);
    let rssPeak = rssStart;
    const rssSamples: number[] = [];
    const heapSamples: number[] = [];
    const detachedSamples: number[] = [];

    const rng = new Rng(SEED);
    const kinds = new Map<string, number>();
    let sent = 0;
    let reconnects = 0;
    let lastChecked = 0;
    let bytesAtCheck = streamedBytes;

    const fuzzer = async (index: number): Promise<void> => {
      const codec = index % 2 === 0 ? 'msgpack' : 'json';
      let socket: FuzzSocket | undefined;
      while (sent < FRAMES) {
        if (socket === undefined || !socket.open) {
          socket?.socket.terminate();
          socket = await FuzzSocket.open(server.url, codec);
          reconnects += 1;
          // Most connections handshake first, so that the frames reach the method handlers.
          if (rng.chance(0.8)) for (const frame of handshakeFrames(codec)) await socket.send(frame);
        }
        const frame = nextFuzzFrame(rng, codec);
        kinds.set(frame.kind, (kinds.get(frame.kind) ?? 0) + 1);
        sent += 1;
        await socket.send(frame);
        if (sent % BARRIER_EVERY === 0) await socket.barrier();
        if (sent - lastChecked >= CHECK_EVERY) {
          lastChecked = sent;
          const rss = rssBytes(server.pid);
          rssSamples.push(rss);
          rssPeak = Math.max(rssPeak, rss);
          const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
          heapSamples.push(metricValue(metrics, 'nodejs_heap_size_used_bytes'));
          detachedSamples.push(metricValue(metrics, 'execd_sessions', { state: 'detached' }));
          // The healthy stream advanced since the last check (deadline-bounded, not timed).
          const before = bytesAtCheck;
          await waitFor(() => streamedBytes > before, {
            timeoutMs: 30_000,
            what: `the healthy stream to advance after ${sent} frames`,
          });
          bytesAtCheck = streamedBytes;
        }
      }
      socket?.socket.terminate();
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, index) => fuzzer(index)));

    // Alive, ready, still serving new sessions, and nothing logged at error level.
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.httpUrl}/readyz`)).status).toBe(200);
    const probe = await ExecServerClient.connect({ url: server.url, codec: 'json' });
    expect((await probe.environmentStatus()).status).toBe('ready');
    await probe.close();
    rssPeak = Math.max(rssPeak, rssBytes(server.pid));
    expect(rssPeak - rssStart).toBeLessThan(MAX_RSS_GROWTH_BYTES);
    // Bounded, not just small: detached fuzz sessions live for their 30 s TTL, so memory rises to
    // a plateau (sessions expire as fast as new ones detach) and stays there. In a long run the
    // last third must not climb above the middle third (a per-frame leak would keep climbing).
    if (rssSamples.length >= 9) {
      const third = Math.floor(rssSamples.length / 3);
      const middle = Math.max(...rssSamples.slice(third, 2 * third));
      const last = Math.max(...rssSamples.slice(2 * third));
      expect(last - middle).toBeLessThan(PLATEAU_SLACK_BYTES);
    }
    expect(server.stderr).toBe('');

    // The healthy stream: every line, in order, none lost or repeated, through the whole run.
    await counter.terminate();
    const result = await followed;
    const numbers = result.stdout.toString().trimEnd().split('\n').map(Number);
    expect(numbers.length).toBeGreaterThan(10);
    expect(numbers.every((value, index) => value === index + 1)).toBe(true);
    expect(result.closed).toBe(true);
    console.log(
      `fuzz seed ${SEED}: ${sent} frames over ${reconnects} connections, rss ${(rssStart / 2 ** 20).toFixed(0)} -> peak ${(rssPeak / 2 ** 20).toFixed(0)} MiB, healthy lines ${numbers.length}, rss trace ${rssSamples.map((rss) => Math.round(rss / 2 ** 20)).join(',')} MiB, heap trace ${heapSamples.map((heap) => Math.round(heap / 2 ** 20)).join(',')} MiB, detached sessions ${detachedSamples.join(',')}, kinds ${JSON.stringify(Object.fromEntries(kinds))}`,
    );
  });
});
