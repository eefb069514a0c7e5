// Sandboxes started before their commands (PreparedSandboxes): a command run in one must be
// indistinguishable from a cold start, confined by the plan made when it was asked for, and no
// other sandbox may reach the waiter.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { waitFor } from '@execd/test-kit';
import { beforeAll, describe, expect, test } from 'vitest';
import { PreparedSandboxes, type SpawnResult, sandboxFromContext, spawnProcess } from '../src/index.ts';
import { childEnv, procEntries, requireBwrap, tempDir } from './helpers/index.ts';

beforeAll(() => {
  requireBwrap();
});

interface Spec {
  readonly command: readonly string[];
  readonly cwd: string;
  readonly env?: Record<string, string>;
  readonly tty?: boolean;
  readonly stdinOpen?: boolean;
  readonly cols?: number;
  readonly rows?: number;
  readonly arg0?: string;
}

/**
 * workspace-write on the workspace alone, in a folder outside /tmp: other test files make and
 * remove workspaces under /tmp all the time, and a writable /tmp's contents are part of every plan
 * (its repositories and placeholders are masked), so a waiter's plan would often differ from its
 * command's and the command start cold (correctly, but not what these tests look at).
 */
const CONTEXT = { profile: 'workspace-write', excludeSlashTmp: true, excludeTmpdirEnvVar: true } as const;

/** A workspace for these tests (see {@link CONTEXT}). */
function workspace(): ReturnType<typeof tempDir> {
  return tempDir('execd-prepared-', '/var/tmp');
}

function start(spec: Spec, pool: PreparedSandboxes | undefined): Promise<SpawnResult> {
  return spawnProcess({
    command: spec.command,
    cwd: spec.cwd,
    env: spec.env ?? childEnv(),
    arg0: spec.arg0,
    sandbox: sandboxFromContext(CONTEXT, spec.cwd, { env: {} }),
    tty: spec.tty ?? false,
    stdinOpen: spec.stdinOpen ?? false,
    cols: spec.cols,
    rows: spec.rows,
    preparedSandboxes: pool,
  });
}

async function finish(result: SpawnResult): Promise<{ output: string; exitCode: number }> {
  await using child = result.process;
  const chunks: Buffer[] = [];
  for await (const chunk of child.output()) chunks.push(Buffer.from(chunk.bytes));
  return { output: Buffer.concat(chunks).toString(), exitCode: (await child.closed).exitCode };
}

async function run(spec: Spec, pool?: PreparedSandboxes) {
  const result = await start(spec, pool);
  return { ...(await finish(result)), prepared: result.prepared === true, result };
}

/**
 * Runs `spec` twice to leave a sandbox of its kind waiting (a kind is prepared for once it
 * repeats), and waits until it does.
 */
async function primed(spec: Spec, options: ConstructorParameters<typeof PreparedSandboxes>[0] = {}) {
  const pool = new PreparedSandboxes(options);
  await prime(pool, spec);
  return pool;
}

async function prime(pool: PreparedSandboxes, spec: Spec): Promise<void> {
  const size = pool.size;
  expect((await run(spec, pool)).prepared).toBe(false);
  await pool.settled();
  expect(pool.size).toBe(size);
  expect((await run(spec, pool)).prepared).toBe(false);
  await pool.settled();
}

/**
 * The waiters' processes (perl or bash), children of a bubblewrap (the launcher before it and bubblewrap
 * name the waiter in their argv too).
 */
function waiterPids(): number[] {
  const entries = procEntries();
  const bwraps = new Set(
    entries.filter((entry) => /^\S*bwrap /.test(entry.cmdline)).map((entry) => entry.pid),
  );
  return entries
    .filter(
      (entry) =>
        entry.cmdline.includes('execd-sandbox-waiter') && !bwraps.has(entry.pid) && bwraps.has(entry.ppid),
    )
    .map((entry) => entry.pid);
}

/**
 * What a command can see of how it was started: argv, the exact environment, cwd, descriptors,
 * signal dispositions, privileges, limits, its place in its pid namespace and session.
 */
const PROBE = [
  'printf \'%s\\0\' "$0" "$@"; printf \'\\1\'',
  "env -0; printf '\\1'",
  'pwd',
  'ls /proc/self/fd | sort | tr "\\n" " "; echo',
  'for fd in 0 1 2; do readlink /proc/$$/fd/$fd; done',
  'grep -E "^(SigIgn|SigBlk|SigCgt|NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb)" /proc/$$/status',
  'umask; ulimit -f; ulimit -n',
  'read -r pid comm state ppid pgrp sid rest < /proc/$$/stat; echo "$pid $ppid $pgrp $sid"',
].join('\n');

const PROBE_ARGS = ['argv zero', 'a b', `q'"$(touch pwned)\``, 'new\nline', '', 'é', '--', '-i'];

const PROBE_ENV = {
  ...childEnv(),
  WEIRD: 'a\nb=c ',
  EMPTY: '',
  'DOT.NAME': 'x',
  PWD: '/nonexistent',
  LD_PRELOAD: '',
};

/** The probe's output with what differs between any two runs (inode and pty numbers) blanked. */
function stable(output: string): string {
  return output.replace(/\[\d+\]/g, '[]').replace(/\/dev\/pts\/\d+/g, '/dev/pts/N');
}

/** Each waiter program (`PreparedSandboxes`' `waiters`): perl by default, bash where asked. */
const WAITERS = [['perl'], ['bash']] as const;

describe('a command in a prepared sandbox', () => {
  test.each([
    ['pipes', false, WAITERS[0]],
    ['a PTY', true, WAITERS[0]],
    ['pipes', false, WAITERS[1]],
    ['a PTY', true, WAITERS[1]],
  ])('sees exactly what it sees started cold (%s, %s waiter)', async (_name, tty, waiters) => {
    using ws = workspace();
    const spec: Spec = {
      command: ['/bin/bash', '-c', PROBE, ...PROBE_ARGS],
      cwd: ws.path,
      env: PROBE_ENV,
      tty,
    };
    const pool = await primed(spec, { waiters });
    try {
      const cold = await run(spec);
      const prepared = await run(spec, pool);
      expect(prepared.prepared).toBe(true);
      expect(cold.prepared).toBe(false);
      expect(prepared.exitCode).toBe(0);
      expect(stable(prepared.output)).toBe(stable(cold.output));
      // The probe itself: argv intact, the environment exact (bubblewrap's PWD included).
      // (A terminal turns each \n into \r\n.)
      const [argv, env] = (tty ? cold.output.replaceAll('\r\n', '\n') : cold.output).split('\x01');
      expect(argv).toBe(`${PROBE_ARGS.join('\0')}\0`);
      const vars = env!.split('\0').filter((entry) => entry !== '');
      expect(vars).toContain('WEIRD=a\nb=c ');
      expect(vars).toContain(`PWD=${ws.path}`);
      expect(existsSync(join(ws.path, 'pwned'))).toBe(false);
    } finally {
      await pool.close();
    }
  });

  test('runs in its own cgroup, with its limits', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/cat', '/proc/self/cgroup'], cwd: ws.path };
    const pool = await primed(spec);
    try {
      const prepared = await run(spec, pool);
      expect(prepared.prepared).toBe(true);
      const files = prepared.result.cgroupProcsFiles ?? [];
      for (const file of files) expect(prepared.output).toContain(`/${basename(dirname(file))}\n`);
      expect(prepared.result.limits?.inForce).toEqual(
        expect.objectContaining({ maxFileBytes: expect.any(Number) }),
      );
    } finally {
      await pool.close();
    }
  });

  test('reads its stdin when it is open', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/cat'], cwd: ws.path, stdinOpen: true };
    const pool = new PreparedSandboxes();
    try {
      for (let i = 0; i < 2; i++) {
        const first = await start(spec, pool);
        first.process.closeStdin();
        await finish(first);
        await pool.settled();
      }
      const result = await start(spec, pool);
      expect(result.prepared).toBe(true);
      await result.process.write('through the waiter\n');
      result.process.closeStdin();
      expect(await finish(result)).toEqual({ output: 'through the waiter\n', exitCode: 0 });
    } finally {
      await pool.close();
    }
  });

  test.each(WAITERS)('runs in the waiter program asked for (%s)', async (kind) => {
    using ws = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path }, { waiters: [kind] });
    try {
      const pids = waiterPids();
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids)
        expect(basename(readlinkSync(`/proc/${pid}/exe`))).toMatch(new RegExp(`^${kind}`));
    } finally {
      await pool.close();
    }
  });

  test.each(WAITERS)(
    'in a PTY: the asked size is set before it starts, and ^C reaches its trap (%s waiter)',
    async (kind) => {
      using ws = workspace();
      const script = 'stty size; trap "echo TRAPPED; exit 7" INT; echo ready; sleep 100 & wait';
      const spec: Spec = {
        command: ['/bin/bash', '-c', script],
        cwd: ws.path,
        tty: true,
        cols: 100,
        rows: 40,
      };
      const pool = await primed({ ...spec, command: ['/bin/true'], cols: 80, rows: 24 }, { waiters: [kind] });
      try {
        const result = await start(spec, pool);
        expect(result.prepared).toBe(true);
        await using child = result.process;
        let output = '';
        const reading = (async () => {
          for await (const chunk of child.output()) output += Buffer.from(chunk.bytes).toString();
        })();
        await waitFor(() => output.includes('ready'), { what: 'the trap to be set' });
        await child.write('\x03');
        await reading;
        expect(output).toContain('40 100');
        expect(output).toContain('TRAPPED');
        expect((await child.closed).exitCode).toBe(7);
        await pool.settled();
        // Not asked for a size: a cold start's 80x24, not the size of the waiter's first command.
        const unsized = await run({ command: ['/bin/stty', 'size'], cwd: ws.path, tty: true }, pool);
        expect(unsized).toMatchObject({ prepared: true, output: '24 80\r\n' });
      } finally {
        await pool.close();
      }
    },
  );
});

describe('a prepared sandbox is used only when the command plans the same sandbox', () => {
  test('a repository made in the workspace after it started: the command starts cold, .git protected', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/true'], cwd: ws.path };
    const pool = await primed(spec);
    try {
      // The waiter was planned without it: its sandbox would leave sub/.git writable.
      const gitDir = join(ws.path, 'sub', '.git');
      mkdirSync(gitDir, { recursive: true });
      writeFileSync(join(gitDir, 'config'), '[core]\n');
      const attack = await run(
        { command: ['/bin/sh', '-c', 'echo "[core] hooksPath = /tmp" >> sub/.git/config'], cwd: ws.path },
        pool,
      );
      expect(attack.prepared).toBe(false);
      expect(attack.exitCode).not.toBe(0);
      expect(readFileSync(join(gitDir, 'config'), 'utf8')).toBe('[core]\n');
    } finally {
      await pool.close();
    }
  });

  test('from inside another sandbox whose root holds the workspace, the swap is refused', async () => {
    using parent = workspace();
    const ws = join(parent.path, 'ws');
    mkdirSync(join(ws, '.codex'), { recursive: true });
    writeFileSync(join(ws, '.codex', 'config.toml'), 'model = "x"\n');
    const pool = await primed({ command: ['/bin/true'], cwd: ws });
    try {
      // As a model could choose it: a command whose workspace is the parent folder. Its sandbox
      // protects ws/.codex too (a mount point there), so the folder cannot be moved away.
      const swap = await run({
        command: ['/bin/sh', '-c', 'mv ws/.codex ws/.codex-old && mkdir ws/.codex && echo swapped'],
        cwd: parent.path,
      });
      expect(swap.exitCode).not.toBe(0);
      expect(swap.output).toMatch(/busy/i);
      expect(existsSync(join(ws, '.codex-old'))).toBe(false);
      // The waiter still stands on the real .codex: used, and it stays read-only.
      const attack = await run(
        { command: ['/bin/sh', '-c', 'echo "notify = ["/tmp/x"]" > .codex/config.toml'], cwd: ws },
        pool,
      );
      expect(attack.prepared).toBe(true);
      expect(attack.exitCode).not.toBe(0);
      expect(readFileSync(join(ws, '.codex', 'config.toml'), 'utf8')).toBe('model = "x"\n');
    } finally {
      await pool.close();
    }
  });

  // A process outside every sandbox (an approved unsandboxed command, another tool of the user)
  // can still swap it: the waiter's fingerprint is what catches that.
  test.each([
    ['an existing .codex', '.codex', true],
    ['the placeholder of a missing .git', '.git', false],
  ])(
    '%s renamed away and replaced after it started: the command starts cold, the new one protected',
    async (_name, name, exists) => {
      using ws = workspace();
      const protectedDir = join(ws.path, name);
      if (exists) {
        mkdirSync(protectedDir);
        writeFileSync(join(protectedDir, 'config.toml'), 'model = "x"\n');
      }
      const pool = await primed({ command: ['/bin/true'], cwd: ws.path });
      try {
        // What a process outside every sandbox could do: the waiter's read-only mount follows
        // the renamed folder, the new one is a plain folder.
        renameSync(protectedDir, `${protectedDir}-old`);
        mkdirSync(protectedDir);
        const attack = await run(
          {
            command: ['/bin/sh', '-c', `mkdir ${name}/hooks && echo pwned > ${name}/hooks/pre-commit`],
            cwd: ws.path,
          },
          pool,
        );
        expect(existsSync(join(protectedDir, 'hooks'))).toBe(false);
        expect(attack.exitCode).not.toBe(0);
        expect(attack.prepared).toBe(false);
      } finally {
        await pool.close();
        rmSync(`${protectedDir}-old`, { recursive: true, force: true });
      }
    },
  );

  test('another working directory, an arg0 override: never served by a waiter; once is not prepared for', async () => {
    using ws = workspace();
    using other = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path });
    try {
      const elsewhere = await run({ command: ['/bin/pwd'], cwd: other.path }, pool);
      expect(elsewhere).toMatchObject({ prepared: false, output: `${other.path}\n`, exitCode: 0 });
      // Once is not a kind that repeats: nothing is prepared for it.
      await pool.settled();
      expect(pool.size).toBe(1);
      // bubblewrap 0.8 has no --argv0: the cold start refuses it; a waiter would have run it.
      const renamed = run({ command: ['/bin/sh', '-c', 'echo $0'], cwd: ws.path, arg0: 'renamed' }, pool);
      await renamed.then(
        (result) => expect(result).toMatchObject({ prepared: false, output: 'renamed\n' }),
        (error: unknown) => expect(String(error)).toMatch(/--argv0/),
      );
      expect(pool.size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  test('a waiter that died is not used: the command starts cold', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/echo', 'hi'], cwd: ws.path };
    const pool = await primed(spec);
    try {
      for (const pid of waiterPids()) process.kill(pid, 'SIGKILL');
      await waitFor(() => pool.size === 0, { what: 'the dead waiter to be dropped' });
      expect(await run(spec, pool)).toMatchObject({ prepared: false, output: 'hi\n', exitCode: 0 });
    } finally {
      await pool.close();
    }
  });
});

describe('many commands at once', () => {
  test('commands of one kind started together: each runs once, in a waiter or cold, and says so', async () => {
    using ws = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path });
    try {
      let prepared = 0;
      for (let round = 0; round < 3; round++) {
        const runs = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            run(
              {
                command: ['/bin/sh', '-c', `echo "r${round}-${i}"; cat /proc/self/cgroup | wc -l`],
                cwd: ws.path,
              },
              pool,
            ),
          ),
        );
        for (const [i, result] of runs.entries()) {
          expect(result.exitCode).toBe(0);
          expect(result.output).toMatch(new RegExp(`^r${round}-${i}\\n[0-9]+\\n$`));
        }
        prepared += runs.filter((result) => result.prepared).length;
        // One waiter per kind, whatever came at once.
        await pool.settled();
        expect(pool.size).toBe(1);
      }
      expect(prepared).toBeGreaterThanOrEqual(3);
    } finally {
      await pool.close();
    }
    expect(waiterPids()).toEqual([]);
  });
});

describe('nothing else reaches a waiting sandbox', () => {
  test('a sandboxed command cannot find a waiter, its go pipe or its payload', async () => {
    using ws = workspace();
    using attackerWs = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path });
    try {
      const [waiter] = waiterPids();
      expect(waiter).toBeDefined();
      const marker = join(attackerWs.path, 'injected');
      // As a model could choose it: look for any waiter, write a go and a payload into every
      // descriptor of every process it can see.
      const script = [
        // The pattern does not match this script's own argv (nor bubblewrap's, which holds it).
        'for p in /proc/[0-9]*; do grep -qa "execd-sandbox-wai[t]er" "$p/cmdline" 2>/dev/null && echo FOUND "$p"; done',
        `for f in /proc/[0-9]*/fd/*; do printf 'g' > "$f"; printf 'execd-payload-1\\0000\\0000\\000/bin/touch\\000${marker}\\000end\\000' > "$f"; done 2>/dev/null`,
        `ls -l /proc/${waiter}/fd 2>&1 | head -3`,
        'echo done',
      ].join('\n');
      const attack = await run({ command: ['/bin/bash', '-c', script], cwd: attackerWs.path });
      expect(attack.output).not.toContain('FOUND');
      expect(attack.output).toContain('done');
      expect(waiterPids()).toContain(waiter);
      const legit = await run({ command: ['/bin/echo', 'legit'], cwd: ws.path }, pool);
      expect(legit).toMatchObject({ prepared: true, output: 'legit\n', exitCode: 0 });
      expect(existsSync(marker)).toBe(false);
    } finally {
      await pool.close();
    }
  });

  test('the command in it holds neither, nor does any process it can see', async () => {
    using ws = workspace();
    const spec: Spec = {
      command: [
        '/bin/bash',
        '-c',
        'ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -E "pipe|deleted|/proc/" ; echo end',
      ],
      cwd: ws.path,
    };
    const pool = await primed(spec);
    try {
      const result = await run(spec, pool);
      expect(result.prepared).toBe(true);
      // Only `ls`'s own listing of /proc/self/fd and the pipes of the command's stdio.
      const lines = result.output.split('\n').filter((line) => line !== '' && line !== 'end');
      expect(lines.filter((line) => /deleted/.test(line))).toEqual([]);
      expect(lines.filter((line) => /\s[78] -> /.test(line))).toEqual([]);
    } finally {
      await pool.close();
    }
  });
});

describe('lifetime', () => {
  test('the next sandbox is prepared once a short command closed, not beside it', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/sleep', '0.1'], cwd: ws.path };
    // A refill delay far beyond the command, so that a slow machine cannot reach it first.
    const pool = await primed(spec, { refillAfterMs: 60_000 });
    const ready = waiterPids();
    expect(ready).toHaveLength(1);
    const taken = await start(spec, pool);
    try {
      expect(taken.prepared).toBe(true);
      // While it runs (for less than the refill delay), nothing is being prepared. The waiter it
      // took shows its label until it has exec'd the command: only another one would count.
      expect(pool.size).toBe(0);
      expect(waiterPids().filter((pid) => !ready.includes(pid))).toEqual([]);
      expect((await finish(taken)).exitCode).toBe(0);
      expect(pool.size).toBe(1);
      await pool.settled();
      expect(waiterPids()).toHaveLength(1);
    } finally {
      await taken.process.close();
      await pool.close();
    }
  });

  test('a command that runs on gets the next sandbox of its kind prepared meanwhile', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/sleep', '30'], cwd: ws.path };
    const pool = await primed({ ...spec, command: ['/bin/sleep', '0'] });
    const taken = await start(spec, pool);
    try {
      expect(taken.prepared).toBe(true);
      expect(pool.size).toBe(0);
      await waitFor(() => pool.size === 1, { what: 'the next sandbox to be prepared while it runs' });
      await pool.settled();
      // The running command's waiter bash was exec'd into its program: the waiting one is new.
      expect(waiterPids()).toHaveLength(1);
      taken.process.kill();
      await finish(taken);
      expect(await run({ ...spec, command: ['/bin/sleep', '0'] }, pool)).toMatchObject({
        prepared: true,
        exitCode: 0,
      });
    } finally {
      await taken.process.close();
      await pool.close();
    }
  });

  test('an idle waiter ends, and its placeholders go with it', async () => {
    using ws = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path }, { idleMs: 300 });
    try {
      expect(readdirSync(ws.path).sort()).toEqual(['.agents', '.codex', '.git']);
      await waitFor(() => pool.size === 0 && waiterPids().length === 0, { what: 'the idle waiter to end' });
      await waitFor(() => readdirSync(ws.path).length === 0, { what: 'its placeholders to be removed' });
    } finally {
      await pool.close();
    }
  });

  test('close ends every waiter, removes their placeholders, and prepares no more', async () => {
    using ws = workspace();
    using other = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path });
    await prime(pool, { command: ['/bin/true'], cwd: other.path, tty: true });
    expect(pool.size).toBe(2);
    await pool.close();
    await pool.close();
    expect(pool.size).toBe(0);
    expect(waiterPids()).toEqual([]);
    await waitFor(() => readdirSync(ws.path).length === 0 && readdirSync(other.path).length === 0, {
      what: 'the placeholders to be removed',
    });
    expect(await run({ command: ['/bin/echo', 'cold'], cwd: ws.path }, pool)).toMatchObject({
      prepared: false,
      output: 'cold\n',
    });
    expect(pool.size).toBe(0);
  });

  test('what onStarted returns is what a command gets and what is closed', async () => {
    using ws = workspace();
    const closes: number[] = [];
    const wrapped = new Set<unknown>();
    const pool = await primed(
      { command: ['/bin/true'], cwd: ws.path },
      {
        onStarted: (result) => {
          const process = {
            ...result.process,
            close: async () => {
              closes.push(result.process.pid);
              await result.process.close();
            },
          };
          wrapped.add(process);
          return { ...result, process };
        },
      },
    );
    try {
      const taken = await start({ command: ['/bin/echo', 'hi'], cwd: ws.path }, pool);
      expect(taken.prepared).toBe(true);
      expect(wrapped.has(taken.process)).toBe(true);
      await taken.process.close();
      await pool.settled();
      expect(pool.size).toBe(1);
    } finally {
      await pool.close();
    }
    // The taken one closed by its owner, the one prepared after it by the pool.
    expect(closes).toHaveLength(2);
    expect(wrapped.size).toBe(2);
  });

  test('stats count commands by how they started and waiters by how they ended', async () => {
    using ws = workspace();
    const spec: Spec = { command: ['/bin/true'], cwd: ws.path };
    const pool = await primed(spec);
    expect(pool.stats()).toEqual({
      waiting: 1,
      started: 1,
      commands: { prepared: 0, cold: 2 },
      ended: { unusable: 0, died: 0, idle: 0, evicted: 0, closed: 0 },
    });
    expect((await run(spec, pool)).prepared).toBe(true);
    await pool.settled();
    for (const pid of waiterPids()) process.kill(pid, 'SIGKILL');
    await waitFor(() => pool.size === 0, { what: 'the killed waiter to be dropped' });
    expect((await run(spec, pool)).prepared).toBe(false);
    await pool.settled();
    await pool.close();
    expect(pool.stats()).toEqual({
      waiting: 0,
      started: 3,
      commands: { prepared: 1, cold: 3 },
      ended: { unusable: 0, died: 1, idle: 0, evicted: 0, closed: 1 },
    });
  });

  test('at most `max` wait: the oldest makes room', async () => {
    using ws = workspace();
    using other = workspace();
    const pool = await primed({ command: ['/bin/true'], cwd: ws.path }, { max: 1 });
    try {
      await prime(pool, { command: ['/bin/true'], cwd: other.path });
      expect(pool.size).toBe(1);
      await waitFor(() => waiterPids().length === 1, { what: 'the oldest waiter to end' });
      expect((await run({ command: ['/bin/true'], cwd: ws.path }, pool)).prepared).toBe(false);
      await pool.settled();
      expect((await run({ command: ['/bin/true'], cwd: ws.path }, pool)).prepared).toBe(true);
    } finally {
      await pool.close();
    }
  });
});
