// The "raw Node" ceiling of the output path: the least a Node WebSocket server can do to move a
// process's output to a client. No protocol: no seq, no retention, no JSON-RPC, no encoding; each
// read of the child's pipe (or terminal) leaves as one binary frame as it comes, and the read
// stops while the socket holds more than HIGH_WATER bytes (the back-pressure any server needs).
//
// Run as its own process (`node raw-relay.mjs`), like the servers it is compared with, so its CPU
// is measured the same way. It prints `ws://127.0.0.1:PORT` on stdout. A client sends one text
// frame, `{"argv": [...], "tty": false}`; the relay runs it and closes the connection (1000)
// once the child has exited and its output is sent.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { WebSocketServer } from 'ws';

const HIGH_WATER = 4 * 1024 * 1024;
const require = createRequire(import.meta.url);
const ptyUtilsDir = dirname(require.resolve('@execd/pty-utils/package.json'));
const nodePty = createRequire(join(ptyUtilsDir, 'package.json'))('@lydell/node-pty');

/** Pipes: child_process.spawn, stdout read as Node reads any pipe. */
function relayPipe(ws, argv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const source = child.stdout;
  source.on('data', (data) => {
    ws.send(data);
    if (ws.bufferedAmount > HIGH_WATER) {
      source.pause();
      ws._socket.once('drain', () => source.resume());
    }
  });
  let ended = false;
  let exited = false;
  const done = () => ended && exited && ws.close(1000);
  source.once('end', () => {
    ended = true;
    done();
  });
  child.once('exit', () => {
    exited = true;
    done();
  });
  ws.once('close', () => child.kill('SIGKILL'));
}

/** A terminal: node-pty with Buffer output, paused the same way. */
function relayPty(ws, argv) {
  const term = nodePty.spawn(argv[0], argv.slice(1), {
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: process.env,
    encoding: null,
  });
  let paused = false;
  term.onData((data) => {
    ws.send(data);
    if (!paused && ws.bufferedAmount > HIGH_WATER) {
      paused = true;
      term.pause();
      ws._socket.once('drain', () => {
        paused = false;
        term.resume();
      });
    }
  });
  // node-pty reports the exit after the last output it read from the terminal.
  term.onExit(() => ws.close(1000));
  ws.once('close', () => {
    try {
      term.kill('SIGKILL');
    } catch {}
  });
}

const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
server.on('connection', (ws) => {
  ws.once('message', (data) => {
    const { argv, tty } = JSON.parse(data.toString('utf8'));
    (tty ? relayPty : relayPipe)(ws, argv);
  });
});
server.on('listening', () => process.stdout.write(`ws://127.0.0.1:${server.address().port}\n`));
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    for (const ws of server.clients) ws.terminate();
    server.close(() => process.exit(0));
  });
