#!/usr/bin/env node
// `npm start`: set everything up, then start execd-server on ws://127.0.0.1:7878 (or a free port
// when 7878 is taken), printing its URL and how to connect.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BASE_ENV, log, ROOT, run } from './lib.mjs';

const DEFAULT_PORT = 7878;

// `--no-bootstrap`: start what is built as is (no install, no build), e.g. under a supervisor.
const skipBootstrap = process.argv.includes('--no-bootstrap');
if (!skipBootstrap && run(process.execPath, [join(ROOT, 'scripts', 'bootstrap.mjs'), 'start']) !== 0)
  process.exit(1);

const cli = join(ROOT, 'packages', 'exec-server', 'dist', 'cli', 'execd-server.js');
if (!existsSync(cli)) {
  log('the exec-server package is not built yet; `npm start` will run execd-server on ws://127.0.0.1:7878');
  process.exit(0);
}

function portFree(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

const port = (await portFree(DEFAULT_PORT)) ? DEFAULT_PORT : 0;
const extra = process.argv.slice(2).filter((arg) => arg !== '--no-bootstrap');
// The server's own allocator settings (exec-server README, "Memory under hostile input"); the
// server keeps them from its commands.
const { launcherEnv } = await import(
  pathToFileURL(join(ROOT, 'packages', 'exec-server', 'dist', 'launcher.js')).href
);
const child = spawn(process.execPath, [cli, '--listen', `ws://127.0.0.1:${port}`, ...extra], {
  cwd: ROOT,
  env: { ...BASE_ENV, ...launcherEnv(BASE_ENV) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
child.stdout.setEncoding('utf8');
let announced = false;
child.stdout.on('data', (text) => {
  process.stdout.write(text);
  if (!announced && text.includes('ws://')) {
    announced = true;
    const url = text.trim().split('\n')[0];
    log(`execd-server is listening on ${url}`);
    log(`connect with any WebSocket client (msgpack binary frames or JSON text frames), e.g.`);
    log(`  node packages/uexec/dist/cli/uexec.js --remote ${url} run "echo hi"`);
    log('Ctrl-C stops it and every process it started.');
  }
});
// Stopping this script (by pid, from a supervisor, or the terminal closing) stops the server: every
// signal that would end it is passed on, and it exits when the server has (never before, so the
// server is never left running without it).
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  });
}
// `npm start` stopped by pid: npm dies without passing the signal on, and this script is
// re-parented. Its parent going away stops the server too (checked every second).
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent && child.exitCode === null && child.signalCode === null) {
    log('the process that started this one is gone: stopping execd-server');
    child.kill('SIGTERM');
  }
}, 1_000).unref();
// Nobody may read our output any more (the parent is gone): never die of EPIPE before the server.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});
child.on('exit', (code, signal) => {
  // The server's own status; a server killed by a signal reads as the shell reports it.
  process.exit(code ?? (signal === null ? 1 : 128 + (osConstants.signals[signal] ?? 0)));
});
