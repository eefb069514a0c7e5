import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecServerClient } from '@execd/exec-client';
import { WebSocket } from 'ws';
import { emit, figure } from './lib/measure.mjs';
import {
  log,
  PEER_VERSION,
  peerBinary,
  RAW_RELAY,
  rssBytes,
  startExecdServer,
  startOrSkip,
  startServer,
} from './lib/servers.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const START_ROUNDS = QUICK ? 20 : 200;
const STREAM_MIB = QUICK ? 32 : 256;
const PTY_MIB = QUICK ? 16 : 64;
/** Rounds of the stream and PTY figures, interleaved across the targets; medians are reported. */
const STREAM_ROUNDS = Number(process.env.BENCH_STREAM_ROUNDS ?? (QUICK ? 1 : 3));
const SLEEPERS = QUICK ? 40 : 200;
const LOAD_CLIENTS = QUICK ? 20 : 200;
const LOAD_PROCESSES = 5;
/** `seq 1 LOAD_LINES` per load process: 108,894 bytes (BENCH_LOAD_LINES=140000: about 1 MiB). */
const LOAD_LINES = Number(process.env.BENCH_LOAD_LINES ?? 20_000);
/** `seq 1 140000` per process of the `load1m` figure: 1,038,894 bytes, about 1 MiB. */
const LOAD_1M_LINES = 140_000;
const FIGURES = new Set(
  (process.env.BENCH_FIGURES ?? 'start,stream,pty,memory,load,load1m,connect')
    .split(',')
    .map((name) => name.trim()),
);

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

function params(processId, argv, { tty = false } = {}) {
  return {
    processId,
    argv,
    cwd: 'file:///tmp',
    env: ENV,
    tty,
    pipeStdin: false,
    enforceManagedNetwork: false,
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Follows a process to `closed`; counts output bytes, skipping (and counting) retention gaps. */
async function drain(proc) {
  let bytes = 0;
  let gaps = 0;
  let afterSeq;
  for (;;) {
    try {
      for await (const event of proc.events(afterSeq === undefined ? {} : { afterSeq })) {
        afterSeq = event.seq;
        if (event.type === 'output') bytes += event.chunk.byteLength;
        if (event.type === 'failed') throw new Error(event.message);
      }
      return { bytes, gaps };
    } catch (error) {
      if (error?.code !== 'outputGap') throw error;
      gaps += 1;
      afterSeq = error.firstRetainedSeq - 1;
    }
  }
}

/** (a) start -> closed latency of /bin/true, interleaved across the targets. */
async function startLatency(targets) {
  const samples = new Map(targets.map((target) => [target.label, []]));
  for (let round = -10; round < START_ROUNDS; round++) {
    for (const target of targets) {
      const started = performance.now();
      const proc = await target.client.start(params(`true-${target.label}-${round}`, ['/bin/true']));
      await drain(proc);
      if (round >= 0) samples.get(target.label).push(performance.now() - started);
    }
  }
  return new Map([...samples].map(([label, values]) => [label, median(values)]));
}

/** CPU seconds (user + system) a process has used so far, from `/proc/PID/stat`. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * One process writing `mib` MiB (a 1 MiB block, repeated) as fast as it can, followed to `closed`:
 * delivered MB/s, the share delivered, and the CPU seconds per GiB of the serving process and of
 * this (client) process. (b) pipes, random bytes; (e) a terminal, printable bytes without
 * newlines (the line discipline would turn each `\n` into `\r\n`).
 */
async function oneStream(target, { mib, tty, name }) {
  const block = tty ? "Buffer.alloc(1 << 20, 'x')" : "require('crypto').randomBytes(1 << 20)";
  const script = `const b = ${block}; let n = ${mib};
    const w = () => { while (n > 0) { n--; if (!process.stdout.write(b)) return process.stdout.once('drain', w); } }; w();`;
  const argv = [process.execPath, '-e', script];
  const serverCpu = cpuSeconds(target.servingPid);
  const clientCpu = process.cpuUsage();
  const started = performance.now();
  const { bytes, gaps } = target.raw
    ? await rawDrain(target.url, { argv, tty })
    : await drain(await target.client.start(params(name, argv, { tty })));
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientCpu);
  const gib = Math.max(bytes, 1) / 2 ** 30;
  return {
    mbPerSecond: bytes / 1e6 / seconds,
    delivered: bytes / (mib * 2 ** 20),
    gaps,
    serverCpuPerGiB: (cpuSeconds(target.servingPid) - serverCpu) / gib,
    clientCpuPerGiB: (client.user + client.system) / 1e6 / gib,
  };
}

/**
 * The raw Node relay's stream (`lib/raw-relay.mjs`): one bare WebSocket, the binary frames counted
 * as they arrive, until the relay closes the connection. The least a Node client can do.
 */
async function rawDrain(url, { argv, tty }) {
  const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
  let bytes = 0;
  socket.on('message', (data) => {
    bytes += data.length;
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const closed = new Promise((resolve, reject) => {
    socket.once('close', (code) =>
      code === 1000 ? resolve() : reject(new Error(`raw relay closed with ${code}`)),
    );
  });
  socket.send(JSON.stringify({ argv, tty }));
  await closed;
  return { bytes, gaps: 0 };
}

/**
 * STREAM_ROUNDS rounds of `measure(target, round)`, the targets interleaved round by round (so
 * machine load hits them alike); per target, the median of each value measured.
 */
async function interleavedRounds(targets, measure) {
  const runs = new Map(targets.map((target) => [target.label, []]));
  for (let round = 0; round < STREAM_ROUNDS; round++) {
    for (const target of targets) runs.get(target.label).push(await measure(target, round));
  }
  return Object.fromEntries(
    [...runs].map(([label, values]) => [
      label,
      Object.fromEntries(
        Object.keys(values[0]).map((key) => [key, median(values.map((value) => value[key]))]),
      ),
    ]),
  );
}

/** `oneStream` over interleaved rounds: medians, and the smallest share delivered. */
async function streams(targets, options) {
  const delivered = new Map();
  const result = await interleavedRounds(targets, async (target, round) => {
    const run = await oneStream(target, { ...options, name: `${options.name}-${target.label}-${round}` });
    delivered.set(
      target.label,
      Math.min(delivered.get(target.label) ?? Number.POSITIVE_INFINITY, run.delivered),
    );
    return run;
  });
  for (const [label, share] of delivered) result[label].delivered = share;
  return result;
}

const RAW_NAME = 'raw Node relay: the same output, one binary frame per read, no protocol';

/**
 * The stream figures against the raw Node relay: what share of the ceiling each codec reaches,
 * and where the ceiling stands against the original (the most any Node server gets here).
 */
function ceilingFigures(results, what) {
  const raw = results.raw;
  const rows = ['msgpack', 'json'].map((codec) =>
    figure({
      figure: `${what}, execd ${codec} against the raw Node relay (MB/s)`,
      execd: results[codec].mbPerSecond,
      unit: 'MB/s',
      baseline: raw.mbPerSecond,
      baselineName: RAW_NAME,
    }),
  );
  rows.push(
    figure({
      figure: `${what}: the raw Node relay itself (the execd column), against the original`,
      execd: raw.mbPerSecond,
      unit: 'MB/s',
      baseline: results.original?.mbPerSecond ?? null,
      baselineName: results.original ? `original exec-server ${PEER_VERSION} (json)` : null,
    }),
    figure({
      figure: `${what}: relay CPU per GiB, raw Node relay (the execd column), against the original`,
      execd: raw.serverCpuPerGiB,
      unit: 's/GiB',
      baseline: results.original?.serverCpuPerGiB ?? null,
      baselineName: results.original ? `original exec-server ${PEER_VERSION} (json)` : null,
    }),
    figure({
      figure: `${what}: share the raw Node relay delivered`,
      execd: raw.delivered * 100,
      unit: '%',
      baseline: null,
      baselineName: null,
    }),
  );
  return rows;
}

/**
 * (c) RSS of a fresh server's serving process with SLEEPERS `sleep 30` children, and the marginal
 * memory per process against the same server idle (connected, one process run to warm it up).
 */
async function sleeperMemory(start, codec) {
  const server = await start();
  try {
    const client = await ExecServerClient.connect({ url: server.url, codec });
    await drain(await client.start(params('warm', ['/bin/true'])));
    await sleep(1_000);
    const pid = server.servingPid();
    const idle = rssBytes(pid);
    const procs = [];
    for (let i = 0; i < SLEEPERS; i++) procs.push(await client.start(params(`sleep-${i}`, ['sleep', '30'])));
    await sleep(1_000);
    const loaded = rssBytes(pid);
    await Promise.allSettled(procs.map((proc) => proc.terminate()));
    await client.close();
    return { idle, loaded, perProcess: (loaded - idle) / SLEEPERS };
  } finally {
    await server.stop();
  }
}

/** (d) LOAD_CLIENTS clients, LOAD_PROCESSES `seq` processes each, all at once. */
async function loadThroughput(url, codec, lines = LOAD_LINES) {
  const clients = await Promise.all(
    Array.from({ length: LOAD_CLIENTS }, () =>
      ExecServerClient.connect({ url, codec, clientName: 'bench-load' }),
    ),
  );
  const started = performance.now();
  const totals = await Promise.all(
    clients.flatMap((client, c) =>
      Array.from({ length: LOAD_PROCESSES }, async (_, p) => {
        const proc = await client.start(params(`load-${c}-${p}`, ['seq', '1', String(lines)]));
        return (await drain(proc)).bytes;
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.close()));
  return totals.reduce((sum, n) => sum + n, 0) / 1e6 / seconds;
}

/**
 * (g) The load figure with about 1 MiB per process, each round on a server of its own, started
 * for it and stopped after it: what a platform team's fresh `execd-server` does with a burst of
 * 1,000 commands each writing a megabyte (as the issue's own measurement). On one long-lived
 * server the rounds would meet the output the rounds before retained (1 MiB per process for
 * 30 s, as the original), which the `load` figure already shows.
 */
async function freshServerLoad(starters) {
  return interleavedRounds(starters, async (target) => {
    const server = await target.start();
    try {
      return { rate: await loadThroughput(server.url, target.codec, LOAD_1M_LINES) };
    } finally {
      await server.stop();
    }
  });
}

/**
 * (f) LOAD_CLIENTS clients connecting at once (WebSocket upgrade + \`initialize\`), then closing:
 * wall time, and the serving process's CPU seconds. Rounds interleaved across the targets; medians.
 */
async function connectStorms(targets) {
  return interleavedRounds(targets, async (target) => {
    const serverCpu = cpuSeconds(target.servingPid);
    const started = performance.now();
    const clients = await Promise.all(
      Array.from({ length: LOAD_CLIENTS }, () =>
        ExecServerClient.connect({ url: target.url, codec: target.codec, clientName: 'bench-connect' }),
      ),
    );
    const ms = performance.now() - started;
    const cpu = cpuSeconds(target.servingPid) - serverCpu;
    await Promise.all(clients.map((client) => client.close()));
    return { ms, cpu };
  });
}

const peerBin = peerBinary();
const servers = [];
try {
  const startExecd = () =>
    startExecdServer((process.env.EXECD_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean));
  const startPeer = () => startServer('original', peerBin, ['exec-server', '--listen', 'ws://127.0.0.1:0']);
  const execd = await startExecd();
  servers.push(execd);
  const peer = peerBin ? await startOrSkip(startPeer) : undefined;
  if (peer) servers.push(peer);

  const targets = [
    {
      label: 'msgpack',
      url: execd.url,
      codec: 'msgpack',
      client: await ExecServerClient.connect({ url: execd.url, codec: 'msgpack' }),
      servingPid: execd.servingPid(),
    },
    {
      label: 'json',
      url: execd.url,
      codec: 'json',
      client: await ExecServerClient.connect({ url: execd.url, codec: 'json' }),
      servingPid: execd.servingPid(),
    },
  ];
  if (peer)
    targets.push({
      label: 'original',
      url: peer.url,
      codec: 'json',
      client: await ExecServerClient.connect({ url: peer.url, codec: 'json' }),
      servingPid: peer.servingPid(),
    });
  const baseline = (value) =>
    peer ? { baseline: value, baselineName: `original exec-server ${PEER_VERSION} (json)` } : {};
  // The stream and PTY figures also run through the raw Node relay: the same bytes with no protocol.
  const streamTargets = [...targets];
  if (FIGURES.has('stream') || FIGURES.has('pty')) {
    const relay = await startServer('raw relay', process.execPath, [RAW_RELAY]);
    servers.push(relay);
    streamTargets.push({ label: 'raw', raw: true, url: relay.url, servingPid: relay.servingPid() });
  }

  let latency;
  if (FIGURES.has('start')) {
    log(`(a) start latency, ${START_ROUNDS} rounds`);
    latency = await startLatency(targets);
  }
  const stream = {};
  if (FIGURES.has('stream')) {
    log(`(b) ${STREAM_MIB} MiB stream`);
    Object.assign(stream, await streams(streamTargets, { mib: STREAM_MIB, tty: false, name: 'stream' }));
  }
  const pty = {};
  if (FIGURES.has('pty')) {
    log(`(e) ${PTY_MIB} MiB through a PTY`);
    Object.assign(pty, await streams(streamTargets, { mib: PTY_MIB, tty: true, name: 'pty' }));
  }
  let connect;
  if (FIGURES.has('connect')) {
    log(`(f) ${LOAD_CLIENTS} clients connecting at once`);
    connect = await connectStorms(targets.filter((target) => target.label !== 'msgpack'));
  }
  for (const target of targets) await target.client.close();
  let memory;
  if (FIGURES.has('memory')) {
    log(`(c) ${SLEEPERS} sleepers`);
    memory = { execd: await sleeperMemory(startExecd, 'msgpack') };
    if (peer) memory.original = await sleeperMemory(startPeer, 'json');
  }
  let load;
  if (FIGURES.has('load')) {
    log(`(d) load, ${LOAD_CLIENTS} clients x ${LOAD_PROCESSES}`);
    // Interleaved rounds, medians: one round is ~15 s of 1,000 spawns on a shared machine.
    const rounds = await interleavedRounds(targets, async (target) => ({
      rate: await loadThroughput(target.url, target.codec),
    }));
    load = Object.fromEntries(Object.entries(rounds).map(([label, { rate }]) => [label, rate]));
  }
  let load1m;
  if (FIGURES.has('load1m')) {
    log(`(g) load, ${LOAD_CLIENTS} clients x ${LOAD_PROCESSES} x seq 1 ${LOAD_1M_LINES}, fresh servers`);
    const starters = [
      { label: 'msgpack', codec: 'msgpack', start: startExecd },
      { label: 'json', codec: 'json', start: startExecd },
    ];
    if (peer) starters.push({ label: 'original', codec: 'json', start: startPeer });
    const rounds = await freshServerLoad(starters);
    load1m = Object.fromEntries(Object.entries(rounds).map(([label, { rate }]) => [label, rate]));
  }
  log(
    JSON.stringify({
      latency: latency && Object.fromEntries(latency),
      stream,
      pty,
      memory,
      load,
      load1m,
      connect,
    }),
  );

  const mib = (bytes) => bytes / 2 ** 20;
  const figures = [];
  for (const codec of latency ? ['msgpack', 'json'] : []) {
    figures.push(
      figure({
        figure: `process/start of /bin/true until process/closed, median of ${START_ROUNDS} (execd ${codec})`,
        execd: latency.get(codec),
        unit: 'ms',
        ...baseline(latency.get('original')),
      }),
    );
  }
  for (const codec of FIGURES.has('stream') ? ['msgpack', 'json'] : []) {
    figures.push(
      figure({
        figure: `one process writing ${STREAM_MIB} MiB to stdout, streamed to a client (execd ${codec}; median of ${STREAM_ROUNDS})`,
        execd: stream[codec].mbPerSecond,
        unit: 'MB/s',
        ...baseline(stream.original?.mbPerSecond),
      }),
      figure({
        figure: `server CPU per GiB streamed, ${STREAM_MIB} MiB to stdout (execd ${codec})`,
        execd: stream[codec].serverCpuPerGiB,
        unit: 's/GiB',
        ...baseline(stream.original?.serverCpuPerGiB),
      }),
      figure({
        figure: `client CPU per GiB streamed, ${STREAM_MIB} MiB to stdout (execd ${codec}; baseline: the same client, json, against the original)`,
        execd: stream[codec].clientCpuPerGiB,
        unit: 's/GiB',
        ...baseline(stream.original?.clientCpuPerGiB),
      }),
      figure({
        figure: `share of the ${STREAM_MIB} MiB the client received (execd ${codec}; the rest fell out of retention)`,
        execd: stream[codec].delivered * 100,
        unit: '%',
        ...baseline(stream.original ? stream.original.delivered * 100 : undefined),
      }),
    );
  }
  if (FIGURES.has('stream')) figures.push(...ceilingFigures(stream, `${STREAM_MIB} MiB to stdout`));
  for (const codec of FIGURES.has('pty') ? ['msgpack', 'json'] : []) {
    figures.push(
      figure({
        figure: `one process writing ${PTY_MIB} MiB through a PTY, streamed to a client (execd ${codec}; median of ${STREAM_ROUNDS})`,
        execd: pty[codec].mbPerSecond,
        unit: 'MB/s',
        ...baseline(pty.original?.mbPerSecond),
      }),
      figure({
        figure: `server CPU per GiB through a PTY (execd ${codec})`,
        execd: pty[codec].serverCpuPerGiB,
        unit: 's/GiB',
        ...baseline(pty.original?.serverCpuPerGiB),
      }),
      figure({
        figure: `share of the ${PTY_MIB} MiB through a PTY the client received (execd ${codec})`,
        execd: pty[codec].delivered * 100,
        unit: '%',
        ...baseline(pty.original ? pty.original.delivered * 100 : undefined),
      }),
    );
  }
  if (FIGURES.has('pty')) figures.push(...ceilingFigures(pty, `${PTY_MIB} MiB through a PTY`));
  if (memory)
    figures.push(
      figure({
        figure: `server RSS with ${SLEEPERS} concurrent \`sleep 30\``,
        execd: mib(memory.execd.loaded),
        unit: 'MiB',
        ...baseline(memory.original ? mib(memory.original.loaded) : undefined),
      }),
      figure({
        figure: `marginal server memory per running process (${SLEEPERS} \`sleep 30\`)`,
        execd: memory.execd.perProcess / 1024,
        unit: 'KiB',
        ...baseline(memory.original ? memory.original.perProcess / 1024 : undefined),
      }),
    );
  for (const codec of load ? ['msgpack', 'json'] : []) {
    figures.push(
      figure({
        figure: `${LOAD_CLIENTS} clients x ${LOAD_PROCESSES} processes streaming \`seq\` at once, aggregate (execd ${codec}; median of ${STREAM_ROUNDS})`,
        execd: load[codec],
        unit: 'MB/s',
        ...baseline(load.original),
      }),
    );
  }
  for (const codec of load1m ? ['msgpack', 'json'] : []) {
    figures.push(
      figure({
        figure: `${LOAD_CLIENTS} clients x ${LOAD_PROCESSES} processes writing ~1 MiB each (\`seq 1 ${LOAD_1M_LINES}\`) at once, fresh server per round, aggregate (execd ${codec}; median of ${STREAM_ROUNDS})`,
        execd: load1m[codec],
        unit: 'MB/s',
        ...baseline(load1m.original),
      }),
    );
  }
  if (connect)
    figures.push(
      figure({
        figure: `${LOAD_CLIENTS} clients connecting at once (upgrade + initialize), until all are in (execd json; median of ${STREAM_ROUNDS})`,
        execd: connect.json.ms,
        unit: 'ms',
        ...baseline(connect.original?.ms),
      }),
      figure({
        figure: `server CPU for ${LOAD_CLIENTS} clients connecting at once (execd json: every local connection attributed to its process)`,
        execd: connect.json.cpu,
        unit: 's',
        ...baseline(connect.original?.cpu),
      }),
    );
  emit('exec-server vs the original Codex exec-server', figures);
} finally {
  for (const server of servers) await server.stop();
}
