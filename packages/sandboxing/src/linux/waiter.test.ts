// The waiters' own work, outside any sandbox: a waiter gets the go pipe on fd 7 and the payload
// file on fd 8 as the waiting launcher gives them, and must exec exactly the command it is sent.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, describe, expect, test } from 'vitest';
import { launcherShell } from './launcher.ts';
import {
  chooseWaiter,
  encodeWaiterPayload,
  hostWaiterPrograms,
  WAITER_FAILED_EXIT_CODE,
  WAITING_LINE,
  type WaiterProgram,
  waiterCommand,
} from './waiter.ts';

const dir = mkdtempSync(join(tmpdir(), 'execd-waiter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface WaiterRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** What the waiter wrote at the start of the payload file before it blocked. */
  readonly announced: string;
}

let runs = 0;

/**
 * Starts the waiter with fd 7 (the go "pipe") and fd 8 (the payload file, read-write, its offset
 * shared), waits for its announcement, writes `payload` after it, then the go byte (none when
 * `go` is false: fd 7 is closed instead). `ignoreInterrupt`: SIGINT ignored, as a PTY launcher leaves it.
 */
async function runWaiter(
  program: WaiterProgram,
  payload: Buffer,
  { ignoreInterrupt = false, go = true } = {},
): Promise<WaiterRun> {
  const file = join(dir, `payload-${++runs}`);
  const fd = openSync(file, 'w+');
  try {
    const argv = waiterCommand(program);
    const prefix = ignoreInterrupt ? "trap '' INT; " : '';
    const child = spawn(launcherShell(), ['-c', `${prefix}exec "$@"`, 'waiter', ...argv], {
      stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'ignore', 'ignore', 'ignore', 'pipe', fd],
      env: {},
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (data) => (stdout += data));
    child.stderr!.on('data', (data) => (stderr += data));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const deadline = Date.now() + 10_000;
    while (readFileSync(file, 'latin1').length < WAITING_LINE.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const announced = readFileSync(file, 'latin1');
    writeSync(fd, payload, 0, payload.length, WAITING_LINE.length);
    const goPipe = (child.stdio as unknown as Writable[])[7]!;
    if (go) goPipe.write('g');
    else goPipe.end();
    const code = await closed;
    return { code, stdout, stderr, announced };
  } finally {
    closeSync(fd);
  }
}

/** A program that prints its argv, its exact initial environment, its fds and ignored signals. */
const PROBE = [
  'printf \'%s\\0\' "$0" "$@"; printf \'\\1\'',
  "cat /proc/$$/environ; printf '\\1'",
  "ls /proc/$$/fd | tr '\\n' ' '; printf '\\1'",
  'grep ^SigIgn /proc/$$/status',
].join('\n');

function payload(env: Record<string, string>, command: readonly string[], resetInterrupt = false): Buffer {
  const bytes = encodeWaiterPayload({ env, command, resetInterrupt });
  if (bytes === undefined) throw new Error('payload not encodable');
  return bytes;
}

/** SIGINT's bit in a `SigIgn:` line. */
function interruptIgnored(line: string): boolean {
  return (BigInt(`0x${line.trim().split(/\s+/)[1]}`) & 2n) !== 0n;
}

const { perl, env } = await hostWaiterPrograms(['perl', 'bash']);
/** Each waiter this host can run. */
const PROGRAMS: [string, WaiterProgram | undefined][] = [
  ['perl', perl === undefined ? undefined : { kind: 'perl', perl }],
  ['bash', env === undefined ? undefined : { kind: 'bash', env }],
];

for (const [name, program] of PROGRAMS) {
  describe.skipIf(process.platform !== 'linux' || program === undefined)(`the ${name} waiter`, () => {
    test('execs the command with exactly its argv and environment, holding fds 0-2 only', async () => {
      const vars = { B: '2', WEIRD: 'a\nb=c ', EMPTY: '', 'DOT.NAME': 'x', A: '1' };
      const args = ['argv zero', 'a b', '', 'é', '--', '-i', `q'"$(touch pwned)\``];
      const run = await runWaiter(program!, payload(vars, ['/bin/bash', '-c', PROBE, ...args]));
      expect(run.announced).toBe(WAITING_LINE);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const [argv, environ, fds, sigIgn] = run.stdout.split('\x01');
      expect(argv).toBe(`${args.join('\0')}\0`);
      expect(environ).toBe('B=2\0WEIRD=a\nb=c \0EMPTY=\0DOT.NAME=x\0A=1\0');
      // (Above 9: the probing shell's own.)
      expect(fds!.split(' ').filter((fd) => fd !== '' && Number(fd) < 10)).toEqual(['0', '1', '2']);
      expect(interruptIgnored(sigIgn!)).toBe(false);
    });

    test('puts an ignored SIGINT back to its default only when asked (a PTY command)', async () => {
      const command = ['/bin/grep', '^SigIgn', '/proc/self/status'];
      const kept = await runWaiter(program!, payload({}, command, false), { ignoreInterrupt: true });
      const reset = await runWaiter(program!, payload({}, command, true), { ignoreInterrupt: true });
      expect([kept.code, reset.code]).toEqual([0, 0]);
      expect(interruptIgnored(kept.stdout)).toBe(true);
      expect(interruptIgnored(reset.stdout)).toBe(false);
    });

    test('looks the program up on the command’s PATH', async () => {
      const run = await runWaiter(program!, payload({ PATH: '/nonexistent:/bin' }, ['printf', 'found']));
      expect(run).toMatchObject({ code: 0, stdout: 'found' });
    });

    test('a program that cannot be found: 127 and a message naming it', async () => {
      const run = await runWaiter(program!, payload({ PATH: '/bin' }, ['/nonexistent/program', 'x']));
      expect(run.code).toBe(127);
      expect(run.stderr).toContain('/nonexistent/program');
    });

    test.each([
      ['another format tag', (fields: string[]) => fields.with(0, 'execd-payload-0')],
      ['no end field', (fields: string[]) => fields.slice(0, -1)],
      ['a variable count past the end', (fields: string[]) => fields.with(2, '9')],
      ['a variable count that is not a number', (fields: string[]) => fields.with(2, '+1')],
      ['no program', (fields: string[]) => [...fields.slice(0, 4), 'end']],
      ['a variable without =', (fields: string[]) => fields.with(3, 'NOVALUE')],
    ])('a payload with %s is refused (%s) and nothing runs', async (_what, change) => {
      const marker = join(dir, `ran-${runs + 1}`);
      const good = payload({ A: '1' }, ['/bin/touch', marker]).toString('latin1').split('\0').slice(0, -1);
      const run = await runWaiter(program!, Buffer.from(`${change(good).join('\0')}\0`, 'latin1'));
      expect(run.code).toBe(WAITER_FAILED_EXIT_CODE);
      expect(() => readFileSync(marker)).toThrow();
    });

    test('a go pipe closed without a byte: it exits, nothing runs', async () => {
      const marker = join(dir, `ran-${runs + 1}`);
      const run = await runWaiter(program!, payload({}, ['/bin/touch', marker]), { go: false });
      expect(run.code).toBe(WAITER_FAILED_EXIT_CODE);
      expect(() => readFileSync(marker)).toThrow();
    });
  });
}

test('perl where the sandbox reads the whole disk, else bash with env; neither without programs', () => {
  const both = { perl: '/usr/bin/perl', env: '/usr/bin/env' };
  expect(chooseWaiter(both, true)).toEqual({ kind: 'perl', perl: '/usr/bin/perl' });
  expect(chooseWaiter(both, false)).toEqual({ kind: 'bash', env: '/usr/bin/env' });
  expect(chooseWaiter({ env: '/usr/bin/env' }, true)).toEqual({ kind: 'bash', env: '/usr/bin/env' });
  expect(chooseWaiter({ perl: '/usr/bin/perl' }, false)).toBeUndefined();
  expect(chooseWaiter({}, true)).toBeUndefined();
});
