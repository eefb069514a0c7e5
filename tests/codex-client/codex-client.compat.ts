// The real Codex CLI (0.169.0) as a client of execd-server. For each sandbox mode, the same script
// (./script.ts: exec_command with pipes and a tty, write_stdin, apply_patch add/update/move/
// delete/failing/outside, view_image of a PNG and of a missing file, a write outside the
// workspace) runs once against the original exec-server and once against execd-server; every
// tool result must be the same after masking chunk id, wall time, session id and the temp folder.
// The AGENTS.md of the working folder must reach the model's first request on both.
//
// `pnpm --filter @execd/tests test:compat` (never `npm test`: the original is a 400 MB download).
// The pairs of results are written to $TMPDIR/execd-codex-client-results.json; with
// EXECD_CODEX_WIRE_LOG=DIR each session goes through the logging proxy
// (packages/test-kit/bin/ws-log-proxy.mjs) and its frames land in DIR.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliChild, type PeerServer, startPeerServer } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliServer } from '../helpers/cli-server.ts';
import { type CodexRun, maskResult, runCodex } from './codex-run.ts';
import { AGENTS_MARKER, RED_PNG, scriptSteps } from './script.ts';

const SANDBOXES = ['bypass', 'workspace-write', 'read-only'] as const;
type Sandbox = (typeof SANDBOXES)[number];
const SERVERS = ['original', 'execd'] as const;
type ServerName = (typeof SERVERS)[number];

/** Two Codex sessions of one script take about 45 s on a 2-core machine; this is the bound. */
const PAIR_TIMEOUT_MS = 400_000;

const WIRE_LOG_DIR = process.env.EXECD_CODEX_WIRE_LOG;
const WS_LOG_PROXY = fileURLToPath(new URL('../../packages/test-kit/bin/ws-log-proxy.mjs', import.meta.url));

/** Outside the workspace and outside /tmp (which workspace-write may write). */
const OUTSIDE = `/var/tmp/execd-codex-client-${process.pid}`;
const STEPS = scriptSteps(OUTSIDE);

const scratch = mkdtempSync(join(tmpdir(), 'execd-codex-client-'));
let original: PeerServer | undefined;
let execd: CliServer | undefined;

interface Outcome {
  readonly run: CodexRun;
  /** What the outside folder held after the session. */
  readonly outside: readonly string[];
  readonly dump: string;
}
const outcomes: Partial<Record<Sandbox, Record<ServerName, Outcome>>> = {};

beforeAll(async () => {
  original = await startPeerServer();
  // A scratch CODEX_HOME, as the original gets one (environmentConfig/read reads its config.toml).
  const codexHome = join(scratch, 'execd-codex-home');
  mkdirSync(codexHome);
  execd = await CliServer.start({
    // EXECD_COMPAT_SERVER_ARGS: more execd-server flags, space-separated (e.g. --prepare-sandboxes).
    args: [
      '--log-level',
      'warn',
      ...(process.env.EXECD_COMPAT_SERVER_ARGS?.split(' ').filter(Boolean) ?? []),
    ],
    env: { ...process.env, CODEX_HOME: codexHome },
  });
});

afterAll(async () => {
  await execd?.[Symbol.asyncDispose]();
  await original?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
  const out = join(tmpdir(), 'execd-codex-client-results.json');
  writeFileSync(out, `${JSON.stringify(outcomes, null, 2)}\n`);
  console.log(`Codex tool results of both servers written to ${out}`);
  rmSync(scratch, { recursive: true, force: true });
});

async function session(sandbox: Sandbox, server: ServerName): Promise<Outcome> {
  rmSync(OUTSIDE, { recursive: true, force: true });
  mkdirSync(OUTSIDE);
  const dump = join(scratch, `${sandbox}-${server}`);
  mkdirSync(dump);
  const serverUrl = server === 'original' ? original!.url : execd!.url;
  // EXECD_CODEX_WIRE_LOG=DIR: every frame of the session in DIR/<sandbox>-<server>.jsonl.
  const proxy = WIRE_LOG_DIR
    ? new CliChild(WS_LOG_PROXY, [
        '--target',
        serverUrl,
        '--out',
        join(WIRE_LOG_DIR, `${sandbox}-${server}.jsonl`),
      ])
    : undefined;
  let run: CodexRun;
  try {
    const url = proxy ? await proxy.firstLine({ what: 'the logging proxy URL' }) : serverUrl;
    run = await runCodex(
      `${sandbox}-${server}`,
      STEPS.map((s) => s.step),
      { execServerUrl: url, sandbox, dump, files: { 'AGENTS.md': `${AGENTS_MARKER}\n`, 'red.png': RED_PNG } },
    );
  } finally {
    // SIGTERM lets the proxy flush its log.
    await proxy?.kill('SIGTERM');
  }
  return { run, outside: readdirSync(OUTSIDE).sort(), dump };
}

function masked(outcome: Outcome, index: number): unknown {
  return maskResult(outcome.run.records[index]?.normalized, outcome.run, { [OUTSIDE]: '<OUTSIDE>' });
}

/** Whether the first request Codex sent to the model (before any tool ran) holds the marker. */
function markerInFirstRequest(outcome: Outcome, name: string): boolean {
  return readFileSync(join(outcome.dump, `${name}.req0.json`), 'utf8').includes(AGENTS_MARKER);
}

for (const sandbox of SANDBOXES) {
  describe(`Codex CLI (${sandbox}) against the original exec-server and execd-server`, () => {
    let pair: Record<ServerName, Outcome>;

    beforeAll(async () => {
      pair = { original: await session(sandbox, 'original'), execd: await session(sandbox, 'execd') };
      outcomes[sandbox] = pair;
    }, PAIR_TIMEOUT_MS);

    test('the original runs the whole script without an anomaly (the reference is sound)', () => {
      expect(pair.original.run.anomalies).toEqual([]);
      expect(pair.original.run.records).toHaveLength(STEPS.length);
    });

    test('execd-server runs the whole script without an anomaly', () => {
      expect(pair.execd.run.anomalies).toEqual([]);
      expect(pair.execd.run.records).toHaveLength(STEPS.length);
    });

    for (const [index, { label }] of STEPS.entries()) {
      test(`step ${index}: ${label}: the same tool result`, () => {
        expect(masked(pair.execd, index)).toEqual(masked(pair.original, index));
      });
    }

    test("the working folder's AGENTS.md reaches the model's first request", () => {
      expect(markerInFirstRequest(pair.original, `${sandbox}-original`)).toBe(true);
      expect(markerInFirstRequest(pair.execd, `${sandbox}-execd`)).toBe(true);
    });

    test('writes outside the workspace leave the same files on the host', () => {
      expect(pair.execd.outside).toEqual(pair.original.outside);
      if (sandbox !== 'bypass') expect(pair.execd.outside).toEqual([]);
    });
  });
}
