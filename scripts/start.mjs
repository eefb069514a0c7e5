#!/usr/bin/env node
// `npm start`: set everything up, then start execd-server on ws://127.0.0.1:7878 (or a free port
// when 7878 is taken), printing its URL and how to connect.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BASE_ENV, log, ROOT, run } from './lib.mjs';

const DEFAULT_PORT = 7878;

if (run(process.execPath, [join(ROOT, 'scripts', 'bootstrap.mjs'), 'start']) !== 0) process.exit(1);

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
const extra = process.argv.slice(2);
const child = spawn(process.execPath, [cli, '--listen', `ws://127.0.0.1:${port}`, ...extra], {
  cwd: ROOT,
  env: BASE_ENV,
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
    log(`  node packages/unified-exec/dist/cli/uexec.js --remote ${url} run "echo hi"`);
    log('Ctrl-C stops it and every process it started.');
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
