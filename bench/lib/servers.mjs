// Starting the servers a bench compares, and reading their processes from /proc.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
export const PEER_VERSION = process.env.CODEX_PEER_VERSION ?? '0.169.0';
export const EXECD_CLI = join(
  dirname(require.resolve('@execd/exec-server/package.json')),
  'dist/cli/execd-server.js',
);
/** The raw Node relay, the ceiling the stream figures are also compared with. */
export const RAW_RELAY = join(BENCH_DIR, 'lib', 'raw-relay.mjs');
export const log = (text) => process.stderr.write(`${text}\n`);

/** The original's `codex` executable, installing it once if needed; undefined when unavailable. */
export function peerBinary() {
  if (process.env.CODEX_PEER_BIN) return process.env.CODEX_PEER_BIN;
  const script = join(BENCH_DIR, '..', '..', 'shared', 'tools', 'codex-peer');
  try {
    if (existsSync(script)) return execFileSync(script, { encoding: 'utf8' }).trim();
    const dir = join(homedir(), '.cache', 'execd-peers', `codex-${PEER_VERSION}`);
    const bin = join(dir, 'node_modules', '.bin', 'codex');
    if (!existsSync(bin)) {
      mkdirSync(dir, { recursive: true });
      log(`installing @openai/codex@${PEER_VERSION} into ${dir} (once, about 400 MB)`);
      execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' });
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '-E', `@openai/codex@${PEER_VERSION}`], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
    return bin;
  } catch (error) {
    log(`original exec-server unavailable: ${error.message}`);
    return undefined;
  }
}

/**
 * Starts a server child and reads its ws:// URL from stdout. `home`: a private CODEX_HOME/TMPDIR;
 * `env`: added to its environment.
 */
export async function startServer(name, command, args, { home = false, env: extraEnv = {} } = {}) {
  const scratch = home ? mkdtempSync(join(tmpdir(), 'execd-bench-peer-')) : undefined;
  const env = { ...process.env, RUST_LOG: 'error', ...extraEnv };
  if (scratch) {
    mkdirSync(join(scratch, 'home'));
    mkdirSync(join(scratch, 'tmp'));
    Object.assign(env, { CODEX_HOME: join(scratch, 'home'), TMPDIR: join(scratch, 'tmp') });
  }
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stderr.resume();
  let stdout = '';
  const urlLine = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no URL within 60 s`)), 60_000);
    child.stdout.on('data', (data) => {
      stdout += data;
      const match = /ws:\/\/[^\s]+/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}`));
    });
    // A program that cannot be started (ENOENT) is an 'error' event: unheard, it would end the
    // bench at once and leave the servers started before it running.
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${name} could not start: ${error.message}`));
    });
  });
  let url;
  try {
    url = await urlLine;
  } catch (error) {
    // Nothing of a server that did not come up is left: its child, its scratch folder.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
  child.stdout.resume();
  return {
    name,
    url,
    child,
    /** The process that serves: the original's npm launcher runs the native binary as a child. */
    servingPid() {
      const native = descendants(child.pid).find((pid) => comm(pid) === 'codex');
      return native ?? child.pid;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * execd-server's CLI on a free loopback port. `EXECD_NODE_OPTIONS` (e.g.
 * `--max-semi-space-size=4`) goes on its Node command line, to measure a tuning.
 */
export async function startExecdServer(extraArgs = []) {
  const nodeFlags = (process.env.EXECD_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  // Started as `npm start` and the container image start it (exec-server README, "Memory under hostile input").
  const { launcherEnv } = await import('@execd/exec-server/launcher');
  return startServer(
    'execd',
    process.execPath,
    [...nodeFlags, EXECD_CLI, '--listen', 'ws://127.0.0.1:0', '--log-level', 'warn', ...extraArgs],
    { env: launcherEnv(process.env) },
  );
}

/**
 * `start()`'s server, or undefined when it cannot start (a CODEX_PEER_BIN naming no file): said
 * in the log, and the figures go on without it.
 */
export async function startOrSkip(start) {
  try {
    return await start();
  } catch (error) {
    log(`original exec-server did not start: ${error.message}`);
    return undefined;
  }
}

/** The original exec-server (`codex exec-server`), with a private CODEX_HOME and TMPDIR. */
export function startPeerServer(bin) {
  return startServer('original', bin, ['exec-server', '--listen', 'ws://127.0.0.1:0'], { home: true });
}

export function comm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export function descendants(root) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {}
  }
  const found = [];
  for (let queue = [root]; queue.length > 0; ) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export function rssBytes(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match[1]) * 1024;
}
