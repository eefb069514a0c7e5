// execd-server vs the original Codex exec-server (0.169.0) on the filesystem methods Codex calls
// through an exec-server, in one run:
//   (a) fs/readFile of a 32 MiB and of a 64 MiB file (random bytes): MB/s of file bytes, median of
//       3 rounds;
//   (b) 1,000 fs/getMetadata calls one after another (Codex walks up for .git and AGENTS.md this
//       way): calls/s, median of 3 rounds.
// Both servers run as separate processes on 127.0.0.1:0 and are driven by the same raw JSON-RPC
// client (JSON text frames: the original's only codec), rounds interleaved so that load on a
// shared machine hits both alike. The original comes from ../../shared/tools/codex-peer (or
// CODEX_PEER_BIN); without it the baselines are null. BENCH_QUICK=1: 8 MiB, 100 calls, 1 round.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { figure } from './lib/measure.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
/**
 * 64 MiB is the figure asked for; 32 MiB stays under execd's one-response limit (`fs/readFile`
 * answers -32600 above 47.9 MiB, the original above 512 MiB), so there is a ratio either way.
 */
const READ_SIZES_MIB = QUICK ? [8] : [32, 64];
const METADATA_CALLS = QUICK ? 100 : 1_000;
const ROUNDS = QUICK ? 1 : 3;

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const EXEC_SERVER_DIR = dirname(require.resolve('@execd/exec-server/package.json'));
const EXECD_CLI = join(EXEC_SERVER_DIR, 'dist/cli/execd-server.js');
// The exec-server's own `ws` (a dependency of the package under test), so this workspace package
// needs no dependency of its own for one raw client.
const { WebSocket } = createRequire(join(EXEC_SERVER_DIR, 'package.json'))('ws');
const log = (text) => process.stderr.write(`${text}\n`);

function peerBinary() {
  if (process.env.CODEX_PEER_BIN) return process.env.CODEX_PEER_BIN;
  const script = join(BENCH_DIR, '..', '..', 'shared', 'tools', 'codex-peer');
  try {
    return existsSync(script) ? execFileSync(script, { encoding: 'utf8' }).trim() : undefined;
  } catch (error) {
    log(`original exec-server unavailable: ${error.message}`);
    return undefined;
  }
}

/** Starts a server child and reads its ws:// URL from stdout. */
async function startServer(name, command, args, env) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  child.stderr.resume();
  let stdout = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no URL within 60 s`)), 60_000);
    child.stdout.on('data', (data) => {
      stdout += data;
      const match = /ws:\/\/\S+/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  child.stdout.resume();
  return {
    name,
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

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
    servers.push(await startServer('execd', process.execPath, [EXECD_CLI, '--log-level', 'warn']));
    const peer = peerBinary();
    if (peer) {
      // A private TMPDIR and CODEX_HOME, as the original needs for its sandbox helper.
      const home = join(scratch, 'codex-home');
      const privateTmp = join(scratch, 'tmp');
      mkdirSync(home);
      mkdirSync(privateTmp);
      servers.push(
        await startServer('original', peer, ['exec-server', '--listen', 'ws://127.0.0.1:0'], {
          CODEX_HOME: home,
          TMPDIR: privateTmp,
          RUST_LOG: 'error',
        }),
      );
    }
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
