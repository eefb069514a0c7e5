import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { figure } from './lib/measure.mjs';
import { log, peerBinary, startExecdServer, startOrSkip, startPeerServer } from './lib/servers.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
/**
 * 64 MiB is the figure asked for; 32 MiB stays under execd's one-response limit (`fs/readFile`
 * answers -32600 above 47.9 MiB, the original above 512 MiB), so there is a ratio either way.
 */
const READ_SIZES_MIB = QUICK ? [8] : [32, 64];
const METADATA_CALLS = QUICK ? 100 : 1_000;
const ROUNDS = QUICK ? 1 : 3;

const require = createRequire(import.meta.url);
const EXEC_SERVER_DIR = dirname(require.resolve('@execd/exec-server/package.json'));
// The exec-server's own `ws` (a dependency of the package under test), so this workspace package
// needs no dependency of its own for one raw client.
const { WebSocket } = createRequire(join(EXEC_SERVER_DIR, 'package.json'))('ws');

/** A minimal JSON-RPC client (no "jsonrpc" field, as the original), after initialize/initialized. */
async function connect(url) {
  const socket = new WebSocket(url, { maxPayload: 1024 * 1024 * 1024, perMessageDeflate: false });
  const pending = new Map();
  let nextId = 1;
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString('utf8'));
    const resolve = pending.get(message.id);
    if (resolve === undefined) return;
    pending.delete(message.id);
    resolve(message);
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (message) =>
        message.error
          ? reject(new Error(`${method}: ${message.error.code} ${message.error.message}`))
          : resolve(message.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('initialize', { clientName: 'execd-fs-bench', resumeSessionId: null });
  socket.send(JSON.stringify({ method: 'initialized', params: {} }));
  return {
    call,
    close: () =>
      new Promise((resolve) => {
        socket.once('close', resolve);
        socket.close();
      }),
  };
}

/** (a) seconds for one fs/readFile of `uri`, the answer decoded; checks the byte count. */
async function readOnce(client, uri, expectedBytes) {
  const started = performance.now();
  const result = await client.call('fs/readFile', { path: uri, sandbox: null });
  const bytes = Buffer.from(result.dataBase64, 'base64').length;
  const seconds = (performance.now() - started) / 1000;
  if (bytes !== expectedBytes)
    throw new Error(`fs/readFile returned ${bytes} bytes, expected ${expectedBytes}`);
  return seconds;
}

/** (b) seconds for METADATA_CALLS sequential fs/getMetadata of `uri`. */
async function metadataRound(client, uri) {
  const started = performance.now();
  for (let i = 0; i < METADATA_CALLS; i++) await client.call('fs/getMetadata', { path: uri, sandbox: null });
  return (performance.now() - started) / 1000;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), 'execd-fs-bench-'));
  const files = {};
  for (const mib of READ_SIZES_MIB) {
    const file = join(scratch, `${mib}.bin`);
    writeFileSync(file, randomBytes(mib * 2 ** 20));
    files[mib] = pathToFileURL(file).href;
  }
  const servers = [];
  try {
    servers.push(await startExecdServer());
    const peer = peerBinary();
    const started = peer ? await startOrSkip(() => startPeerServer(peer)) : undefined;
    if (started) servers.push(started);
    const clients = Object.fromEntries(
      await Promise.all(servers.map(async (server) => [server.name, await connect(server.url)])),
    );
    // Each figure: per server, seconds per round (interleaved). A server that answers an error is
    // dropped from that figure (logged, listed under `failures`); the others are still measured.
    const tasks = [
      ...READ_SIZES_MIB.map((mib) => ({
        figure: `fs/readFile of a ${mib} MiB file, JSON (base64), median of ${ROUNDS}`,
        unit: 'MB/s',
        run: (client) => readOnce(client, files[mib], mib * 2 ** 20),
        value: (seconds) => (mib * 2 ** 20) / 1e6 / seconds,
      })),
      {
        figure: `${METADATA_CALLS} sequential fs/getMetadata, median of ${ROUNDS}`,
        unit: 'calls/s',
        run: (client) => metadataRound(client, files[READ_SIZES_MIB[0]]),
        value: (seconds) => METADATA_CALLS / seconds,
      },
    ];
    const failures = [];
    const figures = [];
    for (const task of tasks) {
      const seconds = Object.fromEntries(servers.map((s) => [s.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const { name } of servers) {
          if (seconds[name] === undefined) continue;
          try {
            seconds[name].push(await task.run(clients[name]));
            log(`${task.figure}: round ${round + 1} ${name}: ${seconds[name].at(-1).toFixed(2)} s`);
          } catch (error) {
            log(`${task.figure}: ${name} failed: ${error.message}`);
            failures.push({ figure: task.figure, server: name, error: error.message });
            delete seconds[name];
          }
        }
      }
      const measured = (name) => (seconds[name] ? task.value(median(seconds[name])) : null);
      if (measured('execd') === null) continue;
      figures.push(
        figure({
          figure: task.figure,
          execd: measured('execd'),
          baseline: measured('original'),
          unit: task.unit,
          baselineName: measured('original') === null ? null : 'original exec-server (Codex 0.169.0)',
        }),
      );
    }
    await Promise.all(Object.values(clients).map((client) => client.close()));
    if (figures.length === 0) throw new Error(`no figure measured: ${JSON.stringify(failures)}`);
    // `failures` is not part of the table (run.mjs ignores other members); it is on the line.
    process.stdout.write(
      `${JSON.stringify({ name: 'filesystem methods: execd-server vs the original exec-server', figures, failures })}\n`,
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exitCode = 1;
});
