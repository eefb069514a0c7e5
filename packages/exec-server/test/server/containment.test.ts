// Issue 17 items 4-5 through the exec-server, in both codecs: Ctrl-C (`process/signal` on
// pipes, a written ^C in a PTY) reaches the command's trap inside the sandbox as outside, with
// the command's own exit code; `process/terminate` and the server's shutdown end every process
// of the tree, `setsid` daemons included, checked from the host in /proc; `environment/info`
// says which containment is in force.
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';
import { detectResourceControl } from '@execd/sandboxing';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const tracker = new ProcessTracker();
const hasCgroups =
  process.platform === 'linux' && process.getuid?.() === 0 && (await detectResourceControl()).kind !== 'none';

let ws: string;
beforeEach(() => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), 'execd-contain-')));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

const special = (kind: string) => ({ type: 'special', value: { kind } });
/** A workspace-write sandbox as Codex 0.169.0 sends it. */
function sandbox(dir: string) {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: special('root'), access: 'read' },
          { path: special('project_roots'), access: 'write' },
          { path: special('slash_tmp'), access: 'write' },
        ],
      },
      network: 'restricted',
    },
    cwd: pathToFileUri(dir),
    workspaceRoots: [pathToFileUri(dir)],
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}

/** Live host processes whose command line is exactly `sleep <marker>`. */
function sleepPids(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1') === `sleep\0${marker}\0`) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

const marker = (): string =>
  `${200000 + Math.floor(Math.random() * 100000)}.${Math.floor(Math.random() * 1e6)}`;

interface Read {
  chunks: { chunk: string | Uint8Array }[];
  nextSeq: number;
  closed: boolean;
  exitCode: number | null;
}

function bytes(chunk: string | Uint8Array): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'base64') : Buffer.from(chunk);
}

async function start(
  client: RawWsClient,
  processId: string,
  script: string,
  sandboxed: boolean,
  tty: boolean,
) {
  await client.call('process/start', {
    processId,
    argv: ['bash', '--norc', '-c', script],
    cwd: pathToFileUri(ws),
    env: { PATH: '/usr/bin:/bin', HOME: ws },
    tty,
    pipeStdin: !tty,
    arg0: null,
    ...(sandboxed ? { sandbox: sandbox(ws) } : {}),
  });
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

/** Reads until `until` matches the output so far (or the process closed). */
async function readUntil(client: RawWsClient, processId: string, until: (text: string) => boolean) {
  let text = '';
  let afterSeq = 0;
  for (;;) {
    const read = await client.call<Read>('process/read', { processId, afterSeq, waitMs: 1_000 });
    for (const chunk of read.chunks) text += bytes(chunk.chunk).toString();
    afterSeq = read.nextSeq - 1;
    if (read.closed || until(text)) return { text, exitCode: read.exitCode, closed: read.closed };
  }
}

const TRAP = "trap 'echo INT-TRAP; exit 42' INT; echo ready; while :; do sleep 0.1; done";

describe.skipIf(process.platform !== 'linux')('containment through the exec-server', () => {
  for (const codec of ['json', 'msgpack'] as const) {
    for (const sandboxed of [false, true]) {
      const where = `${codec}, ${sandboxed ? 'sandboxed' : 'unsandboxed'}`;

      test(`${where}: Ctrl-C reaches the trap (pipes: process/signal; PTY: ^C written), exit 42`, async () => {
        await using server = await startTestServer();
        await using client = await RawWsClient.connect(server.url, { codec });
        await client.initialize();
        await start(client, 'pipe', TRAP, sandboxed, false);
        await start(client, 'pty', TRAP, sandboxed, true);
        await readUntil(client, 'pipe', (t) => t.includes('ready'));
        await readUntil(client, 'pty', (t) => t.includes('ready'));
        await client.call('process/signal', { processId: 'pipe', signal: 'interrupt' });
        const chunk = codec === 'json' ? Buffer.from('\u0003').toString('base64') : Buffer.from('\u0003');
        expect(await client.call('process/write', { processId: 'pty', chunk, writeId: 'c' })).toEqual({
          status: 'accepted',
        });
        for (const processId of ['pipe', 'pty']) {
          const result = await readUntil(client, processId, () => false);
          expect({ processId, exitCode: result.exitCode }).toEqual({ processId, exitCode: 42 });
          expect(result.text).toContain('INT-TRAP');
        }
        await tracker.expectNoSurvivors();
      });

      test(`${where}: terminate and shutdown end setsid daemons`, async () => {
        const [a, b] = [marker(), marker()];
        {
          await using server = await startTestServer();
          await using client = await RawWsClient.connect(server.url, { codec });
          await client.initialize();
          // `a`: a daemon holding the output open after its command exited; `b`: a running tree.
          await start(client, 'exited', `setsid sleep ${a} &\necho started`, sandboxed, false);
          await start(
            client,
            'running',
            `setsid sleep ${b} >/dev/null 2>&1 &\necho started; sleep ${b}`,
            sandboxed,
            false,
          );
          await readUntil(client, 'exited', (t) => t.includes('started'));
          await readUntil(client, 'running', (t) => t.includes('started'));
          if (!sandboxed) {
            await waitFor(() => sleepPids(a).length === 1, { what: 'the daemon of the exited command' });
            expect(await client.call('process/terminate', { processId: 'exited' })).toEqual({
              running: false,
            });
            await waitFor(() => sleepPids(a).length === 0, { what: 'terminate to end the daemon' });
          }
          await waitFor(() => sleepPids(b).length === 2, { what: 'the running tree' });
          // The server's shutdown ends the running tree, daemon included.
        }
        await waitFor(() => sleepPids(a).length + sleepPids(b).length === 0, {
          what: 'every sleeper to be gone',
        });
        await tracker.expectNoSurvivors();
      });
    }
  }

  test.skipIf(!hasCgroups)('environment/info says which containment is in force', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const info = await client.call<{ containment?: { kind: string; summary: string } }>(
      'environment/info',
      {},
    );
    const kind = (await detectResourceControl()).kind;
    expect(info.containment).toEqual({
      kind,
      summary: expect.stringContaining(`a ${kind} group per command`),
    });
  });
});
