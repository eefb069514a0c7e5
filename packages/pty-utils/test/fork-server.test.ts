// The fork server: commands on pipes started by a small helper instead of a fork of this process
// (the shared spawnPipe behaviour runs against both in pipe.test.ts). What is its own: who forks,
// what the child inherits, cgroups, failures, and the helper ending under its commands.
import { closeSync, existsSync, openSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { expectGone, listedFds, waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import { resolveSpawn } from '../src/executables/resolve-program.ts';
import { ForkServer } from '../src/fork-server/fork-server.ts';
import { isProcessAlive } from '../src/process-group.ts';
import {
  closeSpawnedAfterEach,
  collect,
  FORK_SERVER_HELPERS,
  fakeGroup,
  hasForkServerHelper,
  pipe,
  pty,
  Transcript,
  tempDir,
  testEnv,
} from './helpers/harness.ts';

closeSpawnedAfterEach();

const servers: ForkServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** The signal lines of a child's /proc status: what it ignores, blocks, catches. */
const SIGNAL_LINES = 'grep -E "^Sig(Ign|Blk|Cgt)" /proc/self/status';

/** The masks of `SIGNAL_LINES` output by name, as numbers (bit N-1: signal N). */
function signalMasks(lines: string): Record<string, bigint> {
  return Object.fromEntries(
    [...lines.matchAll(/^(Sig\w+):\t([0-9a-f]+)$/gm)].map(([, name, hex]) => [name, BigInt(`0x${hex}`)]),
  );
}

/** Signals 1-31: the ones a program can be given a disposition for (32 and up are glibc's own and real-time). */
const STANDARD_SIGNALS = 0x7fffffffn;

for (const helper of FORK_SERVER_HELPERS) {
  // Each helper where the host has its program (the server falls back from python3 to perl).
  describe.skipIf(process.platform !== 'linux' || !hasForkServerHelper(helper))(
    `the fork server (${helper})`,
    () => {
      async function startServer(): Promise<ForkServer> {
        const server = await ForkServer.start({ helpers: [helper] });
        if (server === undefined) throw new Error(`the ${helper} fork server cannot run here`);
        expect(server.helper).toBe(helper);
        servers.push(server);
        return server;
      }

      test('the helper forks the command, not this process', async () => {
        const forkServer = await startServer();
        await using proc = await pipe(['sh', '-c', 'cat /proc/$$/stat'], { forkServer });
        const stat = (await collect(proc)).stdout;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        expect(Number(fields[1])).toBe(forkServer.helperPid);
        expect(Number(fields[1])).not.toBe(process.pid);
      });

      test("the helper keeps no command's folder: a mount there stays free to go", async () => {
        const forkServer = await startServer();
        const dir = tempDir();
        await using proc = await pipe(['/bin/pwd'], { forkServer, cwd: dir });
        expect((await collect(proc)).stdout).toBe(`${dir}\n`);
        expect(readlinkSync(`/proc/${forkServer.helperPid}/cwd`)).toBe('/');
      });

      test('the child gets the signal dispositions and mask a fork of this process gives', async () => {
        const forkServer = await startServer();
        await using direct = await pipe(['sh', '-c', SIGNAL_LINES]);
        await using forked = await pipe(['sh', '-c', SIGNAL_LINES], { forkServer });
        const got = signalMasks((await collect(forked)).stdout);
        const want = signalMasks((await collect(direct)).stdout);
        expect(got.SigBlk).toBe(0n);
        expect(got.SigCgt).toBe(want.SigCgt);
        // glibc's posix_spawn leaves its two internal signals (32, 33) ignored; no program can ask
        // for them through glibc. Every signal a program can have a disposition for is as a fork gives.
        expect((got.SigIgn ?? -1n) & STANDARD_SIGNALS).toBe((want.SigIgn ?? -2n) & STANDARD_SIGNALS);
        if (helper === 'perl') expect(got.SigIgn).toBe(want.SigIgn);
        // Both helpers ignore or catch signals themselves (perl: CHLD; Python: PIPE, XFSZ, CHLD, INT).
        expect((got.SigIgn ?? -1n) & 0x1005007n).toBe(0n);
      });

      test("a command gets none of this process's descriptors: a terminal master, an inherited fd", async () => {
        const forkServer = await startServer();
        await using victim = await pty(['/bin/cat']);
        const victimOutput = new Transcript(victim);
        await victim.write('ready\n');
        await victimOutput.until('ready');
        // A descriptor this process holds without close-on-exec, as a supervisor could leave one.
        const secret = join(tempDir(), 'secret');
        writeFileSync(secret, 'top secret\n');
        const held = openSync(secret, 'r');
        const probe = [
          'ls -l /proc/$$/fd/',
          'for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then',
          '  [ -c "$f" ] && printf "INJECTED\\n" >&"$n"; cat <&"$n"; fi; done',
        ].join('\n');
        // A helper started while the master and the fd are open (it closes what it inherited).
        const late = await startServer();
        for (const server of [forkServer, late]) {
          await using proc = await pipe(['/bin/bash', '-c', probe], { forkServer: server });
          const { stdout } = await collect(proc);
          expect(listedFds(stdout)).toEqual(['0', '1', '2']);
          expect(stdout).not.toContain('top secret');
        }
        await victim.write('done\n');
        await victimOutput.until(/done\r?\n[\s\S]*done/);
        expect(victimOutput.text).not.toContain('INJECTED');
        closeSync(held);
      });

      test('the child writes its pid into each cgroup procs file before the program runs', async () => {
        const forkServer = await startServer();
        const dir = tempDir();
        const procs = [join(dir, 'a.procs'), join(dir, 'b.procs')];
        for (const file of procs) writeFileSync(file, '');
        await using proc = await pipe(['/bin/echo', 'ran'], { forkServer, joinCgroups: procs });
        expect((await collect(proc)).stdout).toBe('ran\n');
        for (const file of procs) expect(readFileSync(file, 'utf8')).toBe(`${proc.pid}\n`);
      });

      test('a cgroup it cannot join: the program never runs, exit 125 with a line on stderr', async () => {
        const forkServer = await startServer();
        const missing = join(tempDir(), 'gone', 'cgroup.procs');
        const marker = join(tempDir(), 'ran');
        await using proc = await pipe(['/bin/sh', '-c', `touch ${marker}`], {
          forkServer,
          joinCgroups: [missing],
        });
        const { stderr } = await collect(proc);
        expect(await proc.closed).toEqual({ exitCode: 125, signal: null });
        expect(stderr).toMatch(/^execd: cannot join the command cgroup .*gone\/cgroup\.procs/);
        expect(() => readFileSync(marker)).toThrow();
      });

      test('an exec that fails after validation rejects with spawnFailed and the errno', async () => {
        const forkServer = await startServer();
        const dir = tempDir();
        const program = join(dir, 'tool');
        writeFileSync(program, '#!/bin/sh\necho hi\n', { mode: 0o755 });
        const resolved = resolveSpawn({ argv: [program], cwd: dir, env: testEnv() });
        writeFileSync(program, '');
        rmSync(program);
        const error = await forkServer.spawn(resolved, { stdin: false }).catch((e: unknown) => e);
        expect(ExecError.is(error) && error.code).toBe('spawnFailed');
        expect((error as Error).message).toContain(`${program} ENOENT`);
        const badCwd = { ...resolved, file: '/bin/true', cwd: join(dir, 'missing') };
        const cwdError = await forkServer.spawn(badCwd, { stdin: false }).catch((e: unknown) => e);
        expect((cwdError as Error).message).toContain('ENOENT (cwd ');
        // The helper serves on.
        await using proc = await pipe(['/bin/echo', 'still'], { forkServer });
        expect((await collect(proc)).stdout).toBe('still\n');
      });

      test('many commands at once each get their own output, stdin and exit code', async () => {
        const forkServer = await startServer();
        const procs = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            pipe(['/bin/sh', '-c', `read line; echo "$line ${i}"; exit ${i % 7}`], {
              forkServer,
              stdin: 'pipe',
            }),
          ),
        );
        const results = await Promise.all(
          procs.map(async (proc, i) => {
            const output = collect(proc);
            await proc.write(`hello\n`);
            proc.closeStdin();
            return { stdout: (await output).stdout, status: await proc.closed, i };
          }),
        );
        for (const { stdout, status, i } of results) {
          expect(stdout).toBe(`hello ${i}\n`);
          expect(status).toEqual({ exitCode: i % 7, signal: null });
        }
        for (const proc of procs) await proc.close();
      });

      test('the helper killed under a running command: its end is still reported, spawns fork here', async () => {
        const forkServer = await startServer();
        await using proc = await pipe(['/bin/sh', '-c', 'echo up; exec sleep 100'], { forkServer });
        const transcript = new Transcript(proc);
        await transcript.until('up');
        process.kill(forkServer.helperPid, 'SIGKILL');
        await waitFor(() => !forkServer.usable, { what: 'the fork server marked unusable' });
        expect(isProcessAlive(proc.pid)).toBe(true);
        // Nobody reaps it for us now: ending it is still seen, with no status to tell.
        expect(await proc.terminate({ graceMs: 100 })).toEqual({ exitCode: -1, signal: null });
        await transcript.done;
        await expect(
          forkServer.spawn(resolveSpawn({ argv: ['/bin/true'], cwd: '/', env: {} }), { stdin: false }),
        ).rejects.toThrow(/the fork server ended/);
        await using after = await pipe(['sh', '-c', 'cat /proc/$$/stat'], { forkServer });
        const stat = (await collect(after)).stdout;
        expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(process.pid);
      });

      test('close() ends the helper once its commands are done; it is idempotent', async () => {
        const forkServer = await startServer();
        await using proc = await pipe(['/bin/echo', 'x'], { forkServer });
        await proc.closed;
        const first = forkServer.close();
        expect(forkServer.close()).toBe(first);
        await first;
        expect(forkServer.usable).toBe(false);
        expectGone(forkServer.helperPid);
        await waitFor(() => !existsSync(`/proc/${forkServer.helperPid}`), { what: 'the helper gone' });
      });

      test('a script without #! runs through /bin/sh, as an exec of this process does', async () => {
        const forkServer = await startServer();
        const script = join(tempDir(), 'plain-script');
        writeFileSync(script, 'echo "ran as $0 with $1"\n', { mode: 0o755 });
        await using direct = await pipe([script, 'one']);
        await using forked = await pipe([script, 'one'], { forkServer });
        const { stdout } = await collect(forked);
        expect(stdout).toBe(`ran as ${script} with one\n`);
        expect(stdout).toBe((await collect(direct)).stdout);
      });

      test('an empty argv[0] is started as this process would start it', async () => {
        const forkServer = await startServer();
        await using proc = await pipe(['sh', '-c', 'echo "[$0]"; cat /proc/$$/stat'], {
          forkServer,
          arg0: '',
        });
        const { stdout } = await collect(proc);
        expect(stdout.startsWith('[]\n')).toBe(true);
        const stat = stdout.slice(stdout.indexOf('\n') + 1);
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        // Python cannot exec an empty argv[0]: this process forks it; perl's helper does.
        expect(parent).toBe(helper === 'python' ? process.pid : forkServer.helperPid);
      });

      test('with the home groups given, the command starts inside its groups (files stand in for them)', async () => {
        const forkServer = await startServer();
        const group = fakeGroup();
        await using proc = await pipe(['/bin/echo', 'ran'], {
          forkServer,
          joinCgroups: [group.procs],
          cgroupHome: [group.home],
        });
        expect((await collect(proc)).stdout).toBe('ran\n');
        if (helper === 'python') {
          // The helper stepped in (its one thread into the group's tasks), spawned, stepped home.
          expect([readFileSync(group.tasks, 'utf8'), readFileSync(group.home, 'utf8')]).toEqual(['0', '0']);
          expect(readFileSync(group.procs, 'utf8')).toBe('');
        } else {
          expect(readFileSync(group.procs, 'utf8')).toBe(`${proc.pid}\n`);
        }
      });

      test("a group it cannot step into: the child joins it itself and the failure is the command's", async () => {
        const forkServer = await startServer();
        const dir = tempDir();
        const procs = join(dir, 'gone', 'cgroup.procs');
        await using proc = await pipe(['/bin/echo', 'ran'], {
          forkServer,
          joinCgroups: [procs],
          cgroupHome: [join(dir, 'home-tasks')],
        });
        const { stdout, stderr } = await collect(proc);
        expect(await proc.closed).toEqual({ exitCode: 125, signal: null });
        expect(stdout).toBe('');
        expect(stderr).toMatch(/^execd: cannot join the command cgroup .*gone\/cgroup\.procs/);
        // It is not left in a group: the next command starts as usual.
        await using next = await pipe(['/bin/echo', 'next'], { forkServer });
        expect((await collect(next)).stdout).toBe('next\n');
        expect(readlinkSync(`/proc/${forkServer.helperPid}/cwd`)).toBe('/');
      });

      /** What a command sees of its terminal: stat fields, controlling tty, settings, descriptors. */
      // The shell's descriptors are listed by its own glob (no pipeline: while the shell builds
      // one, it holds the pipes' ends, and a listing then sees them).
      const TERMINAL_PROBE = 'cat /proc/$$/stat; tty; stty -a | tr "\\n" " "; echo; cd /proc/$$/fd; echo *';

      test('in a terminal: the helper starts it (Python), as a session leader on its own terminal', async () => {
        const forkServer = await startServer();
        expect(forkServer.canStartInTerminal(resolveSpawn({ argv: ['sh'], cwd: '/', env: testEnv() }))).toBe(
          helper === 'python',
        );
        await using direct = await pty(['sh', '-c', TERMINAL_PROBE], { cols: 101, rows: 33 });
        await using forked = await pty(['sh', '-c', TERMINAL_PROBE], { forkServer, cols: 101, rows: 33 });
        const want = (await collect(direct)).pty.split('\r\n');
        const got = (await collect(forked)).pty.split('\r\n');
        const fields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const [, ppid, pgrp, session, ttyNr, foreground] = fields(got[0] ?? '');
        // Python's helper starts it; perl's cannot, and this process forks it as without one.
        expect(Number(ppid)).toBe(helper === 'python' ? forkServer.helperPid : process.pid);
        expect([pgrp, session, foreground]).toEqual([
          String(forked.pid),
          String(forked.pid),
          String(forked.pid),
        ]);
        expect(Number(ttyNr)).toBeGreaterThan(0);
        expect(got[1]).toMatch(/^\/dev\/pts\/\d+$/);
        // The same settings (speed, size, modes, control characters) as a terminal node-pty makes.
        expect(got[2]).toContain('rows 33; columns 101;');
        expect(got[2]).toBe(want[2]);
        // Its terminal on 0-2, nothing else (the listing's own descriptor aside).
        expect(got[3]?.trim().split(' ').slice(0, 3)).toEqual(['0', '1', '2']);
        expect(got[3]?.trim().split(' ').length).toBeLessThanOrEqual(4);
      });

      test('in a terminal: input, resize, ^C and the exit codes a PTY reports', async () => {
        const forkServer = await startServer();
        await using cat = await pty(['cat'], { forkServer });
        const transcript = new Transcript(cat);
        await cat.write('hello\n');
        await transcript.until('hello\r\nhello\r\n');
        await cat.write('\x04');
        expect(await cat.closed).toEqual({ exitCode: 0, signal: null });
        await using sized = await pty(['sh', '-c', 'read _; stty size'], { forkServer });
        const sizedOut = new Transcript(sized);
        sized.resize(120, 40);
        await sized.write('\n');
        await sizedOut.until('40 120');
        await using looping = await pty(['sh', '-c', 'echo up; while :; do sleep 0.1; done'], { forkServer });
        const loopOut = new Transcript(looping);
        await loopOut.until('up');
        await looping.write('\x03');
        // A PTY child killed by a signal reports 1 (as the original's PTY backend), and the signal.
        expect(await looping.closed).toEqual({ exitCode: 1, signal: 'SIGINT' });
        await using failing = await pty(['sh', '-c', 'exit 7'], { forkServer });
        expect(await failing.closed).toEqual({ exitCode: 7, signal: null });
      });
    },
  );
}
