// Leaks: start/terminate cycles of process trees (pipes and PTYs, sandboxed and not) against the
// execd-server CLI. Afterwards: no leftover process, the server's fd count back to its baseline,
// no zombie or other growth in its part of the process table. `npm test`: 60 cycles;
// `pnpm test:stress`: 1,000.
import { mkdtempSync, rmSync } from 'node:fs';
import type { ExecServerClient } from '@execd/exec-client';
import { ExecServerClient as Client } from '@execd/exec-client';
import { pathToFileUri } from '@execd/protocol';
import { descendants, fdCount, processesWithEnv, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from './helpers/cli-server.ts';
import { childEnv, collect, execParams } from './helpers/exec.ts';
import { metricValue } from './helpers/in-process-server.ts';
import { stressSize } from './helpers/stress.ts';

const CYCLES = stressSize(60, 1_000);
/** Cycles in flight at once (one per variant): keeps a 2-core machine busy but not drowned. */
const CONCURRENCY = 4;
const MARK = 'EXECD_LEAK_TEST_MARK';

interface Variant {
  readonly name: string;
  readonly tty: boolean;
  readonly sandboxed: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'pipes', tty: false, sandboxed: false },
  { name: 'pty', tty: true, sandboxed: false },
  { name: 'pipes+sandbox', tty: false, sandboxed: true },
  { name: 'pty+sandbox', tty: true, sandboxed: true },
];

let server: CliServer;
let client: ExecServerClient;
let workspace: string;
let serial = 0;

beforeAll(async () => {
  workspace = mkdtempSync('/tmp/execd-leaks-');
  server = await CliServer.start();
  client = await Client.connect({ url: server.url, codec: 'msgpack' });
});

afterAll(async () => {
  await client?.close();
  await server?.kill('SIGTERM');
  rmSync(workspace, { recursive: true, force: true });
});

/** One cycle: start a tree (a shell with two background sleepers), wait until it is up, terminate. */
async function cycle(variant: Variant): Promise<void> {
  const processId = `${variant.name}-${++serial}`;
  const proc = await client.start(
    execParams({
      processId,
      argv: ['/bin/sh', '-c', 'sleep 600 & sleep 600 & echo ready; wait'],
      cwd: workspace,
      env: childEnv({ [MARK]: 'leak' }),
      tty: variant.tty,
      pipeStdin: !variant.tty,
      ...(variant.sandboxed
        ? {
            sandbox: {
              profile: 'workspace-write',
              network: 'off',
              workspaceRoots: [pathToFileUri(workspace)],
            },
          }
        : {}),
    }),
  );
  expect(proc.sandboxType).toBe(variant.sandboxed ? 'linuxSeccomp' : 'none');
  // Follow until the tree is up (both sleepers forked before `ready` is printed).
  let seen = '';
  for await (const event of proc.events()) {
    if (event.type !== 'output') continue;
    seen += Buffer.from(event.chunk).toString();
    if (seen.includes('ready')) break;
  }
  expect(seen).toContain('ready');
  await proc.terminate();
  const result = await collect(proc);
  expect(result.closed).toBe(true);
  // SIGKILL to the group: 128 + 9 on pipes (129 if the shell saw a hangup first); a tty child
  // killed by a signal reports 1, as the original's PTY backend does.
  if (variant.tty) expect(result.exitCode).toBe(1);
  else expect(result.exitCode).toBeGreaterThanOrEqual(128);
  await proc.close();
}

describe(`start/terminate cycles (${CYCLES})`, () => {
  test('leave no process, no fd and no process-table growth behind', async () => {
    // Warm-up: the first sandbox creates the seccomp program file, the first PTY loads node-pty.
    for (const variant of VARIANTS) await cycle(variant);
    const settle = async (): Promise<number> => {
      await waitFor(() => processesWithEnv(MARK, 'leak').length === 0, {
        timeoutMs: 30_000,
        what: 'every tree to be gone',
      });
      return fdCount(server.pid);
    };
    const baselineFds = await settle();
    const baselineDescendants = descendants(server.pid).map((stat) => `${stat.pid}:${stat.comm}`);

    let next = 0;
    const worker = async (): Promise<void> => {
      for (let index = next++; index < CYCLES; index = next++)
        await cycle(VARIANTS[index % VARIANTS.length]!);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    await settle();
    // Closed processes are retained (readable) for 30 s but hold no OS resources: the fd count
    // comes back to its baseline without waiting for the retention to expire.
    const fds = await waitFor(
      () => {
        const count = fdCount(server.pid);
        return count <= baselineFds && count;
      },
      {
        timeoutMs: 30_000,
        what: `the server's fd count to return to ${baselineFds} (now ${fdCount(server.pid)})`,
      },
    );
    expect(fds).toBeLessThanOrEqual(baselineFds);
    // The server's part of the process table is what it was: its watchdog, nothing else, no zombie.
    expect(descendants(server.pid).map((stat) => `${stat.pid}:${stat.comm}`)).toEqual(baselineDescendants);
    const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
    expect(metricValue(metrics, 'execd_processes', { state: 'running' })).toBe(0);
    expect(metricValue(metrics, 'execd_processes', { state: 'starting' })).toBe(0);
    // Closed ones stay listed until their 30 s retention ends (a long run has evicted the first).
    expect(metricValue(metrics, 'execd_processes', { state: 'closed' })).toBeLessThanOrEqual(
      CYCLES + VARIANTS.length,
    );
  });
});
