// Server memory under hostile input, execd-server next to the original exec-server in one run:
// FUZZ_FRAMES frames (default 20,000) over 8 connections that reconnect whenever the server closes
// them: valid requests of every method, byte mutations of them, random bytes and text, params of
// the wrong shape, and nasty ones (deep nesting, large strings, 10,000 keys). Both get the same
// frames (one seed) as JSON text frames (the original speaks JSON only) plus random binary frames.
// Figures: the serving process's RSS growth (peak - start) and its RSS when the run ends, for two
// passes over the same frames: the large strings 256 KiB, then 4 MiB (FUZZ_LARGE_BYTES: one pass
// of that size only).
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { emit, figure } from './lib/measure.mjs';
import {
  log,
  PEER_VERSION,
  peerBinary,
  rssBytes,
  startExecdServer,
  startOrSkip,
  startPeerServer,
} from './lib/servers.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const FRAMES = Number(process.env.FUZZ_FRAMES ?? (QUICK ? 4_000 : 20_000));
const CONNECTIONS = 8;
const BARRIER_EVERY = 50;
const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const KiB = 1024;
const LARGE_PASSES = process.env.FUZZ_LARGE_BYTES
  ? [Number(process.env.FUZZ_LARGE_BYTES)]
  : [256 * KiB, 4096 * KiB];

/** mulberry32: a small deterministic generator, so both servers get the same frames. */
function rng(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

const ARGV = [['/bin/true'], ['/bin/echo', 'fuzz'], ['/nonexistent/fuzz']];

function validRequest(r) {
  const processId = `fz-${r.int(8)}`;
  const id = r.int(1000);
  const method = r.pick([
    'initialize',
    'process/start',
    'process/read',
    'process/write',
    'process/terminate',
    'process/resize',
    'environment/info',
    'fs/readFile',
    'fs/getMetadata',
    'no/such-method',
  ]);
  const params = {
    initialize: { clientName: 'fuzz' },
    'process/start': {
      processId,
      argv: r.pick(ARGV),
      cwd: '/tmp',
      env: { PATH: '/usr/bin:/bin' },
      tty: r.chance(0.3),
      pipeStdin: r.chance(0.5),
      arg0: null,
    },
    'process/read': { processId, afterSeq: r.int(5), maxBytes: r.int(9000) + 1, waitMs: r.int(3) * 10 },
    'process/write': { processId, chunk: Buffer.from('x'.repeat(r.int(32))).toString('base64') },
    'process/terminate': { processId },
    'process/resize': { processId, cols: r.int(300) + 1, rows: r.int(100) + 1 },
    'environment/info': {},
    'fs/readFile': { path: '/etc/hostname' },
    'fs/getMetadata': { path: r.pick(['/tmp', '/nope', '/etc/passwd']) },
    'no/such-method': { x: 1 },
  }[method];
  return JSON.stringify({ id, method, params });
}

function randomText(r, length) {
  let text = '';
  for (let i = 0; i < length; i++)
    text += String.fromCharCode(r.chance(0.9) ? 32 + r.int(95) : r.int(0xd7ff));
  return text;
}

function mutate(r, text) {
  const chars = [...text];
  for (let n = 1 + r.int(5); n > 0; n--) {
    const at = r.int(chars.length + 1);
    const op = r.int(3);
    if (op === 0) chars.splice(at, 1);
    else if (op === 1) chars.splice(at, 0, r.pick(['{', '}', '"', ',', ':', '[', ']', '\\', '0', 'null']));
    else chars[at] = String.fromCharCode(r.int(128));
  }
  return r.chance(0.2) ? chars.slice(0, r.int(chars.length)).join('') : chars.join('');
}

function wrongShape(r) {
  const values = [null, 0, -1, 1e308, 'x', true, [], [1, 'a'], { a: { b: [null] } }, 'x'.repeat(r.int(4096))];
  const frame = JSON.parse(validRequest(r));
  if (r.chance(0.5)) frame.params = r.pick(values);
  else
    for (const key of Object.keys(frame.params ?? {})) if (r.chance(0.5)) frame.params[key] = r.pick(values);
  if (r.chance(0.2)) frame.id = r.pick(values);
  return JSON.stringify(frame);
}

function nasty(r, largeBytes) {
  switch (r.int(6)) {
    case 0:
      return `{"id":1,"method":"process/start","params":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    case 1:
      return JSON.stringify({
        id: 2,
        method: 'process/write',
        params: { processId: 'x', chunk: 'A'.repeat(largeBytes) },
      });
    case 2:
      return JSON.stringify({
        id: 3,
        method: 'initialize',
        params: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
      });
    case 3:
      return JSON.stringify({ id: Number.MAX_SAFE_INTEGER + 2, method: 'environment/info', params: {} });
    case 4:
      return JSON.stringify({ id: r.int(1000), result: { x: 'y'.repeat(r.int(8192)) } });
    default:
      return JSON.stringify({ method: 'process/output', params: { processId: 'x', seq: 1, chunk: 'AAAA' } });
  }
}

/** The frames every server gets, in order: `{data, binary}`. */
function frames(count, largeBytes) {
  const r = rng(SEED);
  const out = [];
  for (let i = 0; i < count; i++) {
    const kind = r.int(100);
    if (kind < 25) out.push({ data: validRequest(r), binary: false });
    else if (kind < 50) out.push({ data: mutate(r, validRequest(r)), binary: false });
    else if (kind < 60) out.push({ data: Buffer.from(randomText(r, r.int(4096))), binary: true });
    else if (kind < 70) out.push({ data: randomText(r, r.int(4096)), binary: false });
    else if (kind < 90) out.push({ data: wrongShape(r), binary: false });
    else out.push({ data: nasty(r, largeBytes), binary: false });
  }
  return out;
}

const HANDSHAKE = [
  JSON.stringify({ id: 'h', method: 'initialize', params: { clientName: 'fuzz' } }),
  JSON.stringify({ method: 'initialized' }),
];

function open(url) {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { maxPayload: 256 * 1024 * 1024 });
    const state = { socket, open: false, waiting: new Map(), barriers: 0 };
    socket.on('open', () => {
      state.open = true;
      resolve(state);
    });
    socket.on('message', (data) => {
      try {
        const message = JSON.parse(data.toString());
        state.waiting.get(message.id)?.();
      } catch {}
    });
    const closed = () => {
      const wasOpen = state.open;
      state.open = false;
      for (const done of state.waiting.values()) done();
      if (!wasOpen) resolve(state);
    };
    socket.on('close', closed);
    socket.on('error', closed);
  });
}

function send(state, data, binary) {
  if (!state.open) return Promise.resolve();
  return new Promise((resolve) => state.socket.send(data, { binary }, () => resolve()));
}

async function barrier(state) {
  if (!state.open) return;
  const id = `barrier-${++state.barriers}`;
  const answered = new Promise((resolve) => state.waiting.set(id, resolve));
  await send(state, JSON.stringify({ id, method: 'bench/barrier', params: {} }), false);
  await Promise.race([answered, sleep(10_000)]);
  state.waiting.delete(id);
}

async function fuzz(server, list) {
  const pid = server.servingPid();
  // Warm: one session that handshakes and runs a process.
  const warm = await open(server.url);
  for (const data of HANDSHAKE) await send(warm, data, false);
  await barrier(warm);
  warm.socket.close();
  await sleep(1_000);
  const start = rssBytes(pid);
  let peak = start;
  let next = 0;
  let connections = 0;
  const worker = async () => {
    let state;
    let sent = 0;
    while (next < list.length) {
      if (state === undefined || !state.open) {
        state?.socket.terminate();
        state = await open(server.url);
        connections++;
        if (connections % 5 !== 0) for (const data of HANDSHAKE) await send(state, data, false);
      }
      if (next >= list.length) break;
      const frame = list[next++];
      await send(state, frame.data, frame.binary);
      if (++sent % BARRIER_EVERY === 0) {
        await barrier(state);
        peak = Math.max(peak, rssBytes(pid));
      }
    }
    state?.socket.terminate();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  await sleep(2_000);
  const end = rssBytes(pid);
  peak = Math.max(peak, end);
  const alive = server.child.exitCode === null && server.child.signalCode === null;
  return { start, peak, end, growth: peak - start, connections, alive };
}

async function pass(largeBytes, peerBin) {
  const list = frames(FRAMES, largeBytes);
  const results = {};
  for (const [label, startIt] of [
    ['execd', () => startExecdServer()],
    ...(peerBin ? [['original', () => startPeerServer(peerBin)]] : []),
  ]) {
    log(`${label}: ${FRAMES} hostile frames, large strings of ${largeBytes / KiB} KiB`);
    const server = label === 'execd' ? await startIt() : await startOrSkip(startIt);
    if (server === undefined) continue;
    try {
      results[label] = await fuzz(server, list);
    } finally {
      await server.stop();
    }
  }
  log(JSON.stringify(results));
  if (!results.execd.alive) throw new Error('execd-server died under the fuzz');
  const mib = (bytes) => bytes / 2 ** 20;
  const baseline = (value) =>
    results.original ? { baseline: value, baselineName: `original exec-server ${PEER_VERSION}` } : {};
  // The first pass keeps the figures' historical names (256 KiB strings).
  const strings = largeBytes === 256 * KiB ? '' : ` with ${largeBytes / KiB} KiB strings`;
  return [
    figure({
      figure: `server RSS growth over ${FRAMES} hostile frames${strings} (peak - start; lower is better)`,
      execd: mib(results.execd.growth),
      unit: 'MiB',
      ...baseline(results.original && mib(results.original.growth)),
    }),
    figure({
      figure: `server RSS after ${FRAMES} hostile frames${strings} (lower is better)`,
      execd: mib(results.execd.end),
      unit: 'MiB',
      ...baseline(results.original && mib(results.original.end)),
    }),
  ];
}

async function main() {
  const peerBin = peerBinary();
  const figures = [];
  for (const largeBytes of LARGE_PASSES) figures.push(...(await pass(largeBytes, peerBin)));
  emit('fuzz-rss', figures);
}

await main();
