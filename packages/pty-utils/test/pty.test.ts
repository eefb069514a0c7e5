import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { ExecError } from '@execd/protocol';
import { expectGone, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { isProcessAlive } from '../src/process-group.ts';
import { isStdinClosedError } from '../src/stdin-closed.ts';
import {
  closeSpawnedAfterEach,
  collect,
  expectClosedAtDrainCap,
  procStat,
  pty,
  SPAWNERS,
  spawnFrom,
  Transcript,
  tempDir,
  testEnv,
  waitForProgram,
} from './helpers/harness.ts';

closeSpawnedAfterEach();

for (const spawner of SPAWNERS)
  describe(`spawnPty, forked by ${spawner}`, () => {
    spawnFrom(spawner);
    test('runs a python REPL: prompt, evaluation, exit()', async () => {
      await using proc = await pty(['python3', '-i', '-q']);
      const transcript = new Transcript(proc);
      let at = await transcript.until('>>> ');
      await proc.write('print(1+1)\n');
      at = await transcript.until(/\r?\n2\r?\n/, at);
      await transcript.until('>>> ', at);
      await proc.write('exit()\n');
      expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
      await transcript.done;
    });

    test('^D ends a tty cat with exit 0, never a hang-up (the slave side is held until exit)', async () => {
      // GNU cat closes its stdio before it exits; without the held slave the master reads EIO, is
      // destroyed, and the kernel hangs up cat while it still runs (exit 129 in a share of runs).
      for (let run = 0; run < 25; run++) {
        await using proc = await pty(['cat']);
        const transcript = new Transcript(proc);
        await waitForProgram(proc.pid, 'cat');
        await proc.write('hello\n');
        await transcript.until(/hello\r?\n.*hello\r?\n/s);
        await proc.write('\u0004');
        expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
        await transcript.done;
      }
    });

    test('is a session leader with the terminal as its controlling tty', async () => {
      await using proc = await pty(['sh', '-c', 'cat /proc/$$/stat']);
      const { pty: text, stdout, stderr } = await collect(proc);
      expect(stdout + stderr).toBe('');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      expect(Number(fields[2])).toBe(proc.pid);
      expect(Number(fields[3])).toBe(proc.pid);
      expect(Number(fields[4])).not.toBe(0);
      expect(Number(fields[3])).not.toBe(procStat('self').sid);
      expect(proc.tty).toBe(true);
    });

    test('merges stdout and stderr into pty chunks', async () => {
      await using proc = await pty(['sh', '-c', 'echo out; echo err >&2']);
      const output = await collect(proc);
      expect(output.pty).toBe('out\r\nerr\r\n');
    });

    test('gives the child exactly the env it was given (no TERM or PWD added)', async () => {
      await using proc = await pty(['/usr/bin/env'], { env: { ONLY: 'this' } });
      expect((await collect(proc)).pty).toBe('ONLY=this\r\n');
    });

    test('shows the arg0 override as argv[0], with the env untouched', async () => {
      const env = { PATH: '/usr/bin:/bin', KEEP: '1' };
      await using proc = await pty(['sh', '-c', 'tr "\\0" " " < /proc/$$/cmdline; echo; /usr/bin/env'], {
        arg0: 'renamed',
        env,
      });
      const lines = (await collect(proc)).pty.split('\r\n');
      expect(lines[0]).toBe('renamed -c tr "\\0" " " < /proc/$$/cmdline; echo; /usr/bin/env ');
      // dash exports PWD itself; nothing else may appear.
      expect(
        lines
          .slice(1)
          .filter((line) => line !== '' && !line.startsWith('PWD='))
          .sort(),
      ).toEqual(['KEEP=1', 'PATH=/usr/bin:/bin']);
    });

    test('defaults to 80x24 and honours cols/rows', async () => {
      await using plain = await pty(['stty', 'size']);
      expect((await collect(plain)).pty).toBe('24 80\r\n');
      await using sized = await pty(['stty', 'size'], { cols: 132, rows: 50 });
      expect((await collect(sized)).pty).toBe('50 132\r\n');
    });

    test('resize changes what the child sees', async () => {
      await using proc = await pty(['sh', '-c', 'stty -echo; echo ready; read line; stty size']);
      const transcript = new Transcript(proc);
      await transcript.until('ready');
      proc.resize(100, 40);
      await proc.write('go\n');
      await transcript.done;
      expect(transcript.text).toBe('ready\r\n40 100\r\n');
      expect(() => proc.resize(0, 10)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
    });

    test('drains output a grandchild writes after the session leader exited', async () => {
      const gate = join(tempDir(), 'gate');
      // Ignored before the fork, so the grandchild already ignores the hang-up when its leader exits.
      const script = `trap '' HUP; (while [ ! -e '${gate}' ]; do sleep 0.01; done; echo late) & echo early`;
      await using proc = await pty(['sh', '-c', script], { drainTimeoutMs: 60_000 });
      const transcript = new Transcript(proc);
      expect((await proc.exited).exitCode).toBe(0);
      await transcript.until('early');
      writeFileSync(gate, '');
      await proc.closed;
      await transcript.done;
      expect(transcript.text).toBe('early\r\nlate\r\n');
    });

    test('closes at the drain cap while a grandchild holds the terminal; close() kills it', async () => {
      await using proc = await pty(['sh', '-c', "trap '' HUP; sleep 100 & echo $!"], { drainTimeoutMs: 50 });
      expect(await expectClosedAtDrainCap(proc)).toEqual({ exitCode: 0, signal: null });
    });

    test('terminate kills background children in the same process group', async () => {
      await using proc = await pty(['sh', '-c', 'sleep 100 & echo $!; sleep 100 & echo $!; wait']);
      const transcript = new Transcript(proc);
      await transcript.until(/\d+\r\n\d+\r\n/);
      const pids = transcript.text.trim().split('\r\n').map(Number);
      expectGone(...pids);
      const status = await proc.terminate({ graceMs: 10_000 });
      expect(status).toEqual({ exitCode: 1, signal: 'SIGHUP' });
      for (const pid of [proc.pid, ...pids])
        await waitFor(() => !isProcessAlive(pid), { what: `pid ${pid} gone` });
      await proc.closed;
    });

    test('terminate leaves no survivor of an interactive bash with jobs, even one ignoring SIGHUP', async () => {
      await using proc = await pty(['bash', '--norc', '--noprofile', '-i'], {
        env: testEnv({ PS1: 'PROMPT$ ' }),
      });
      const transcript = new Transcript(proc);
      let at = await transcript.until('PROMPT$ ');
      await proc.write('sleep 100 & echo "JOB=$!"\n');
      at = await transcript.until(/JOB=\d+/, at);
      await proc.write('sleep 100 & echo "JOB=$!"\n');
      at = await transcript.until(/JOB=\d+/, at);
      await proc.write(`(trap '' HUP; exec sleep 100) & echo "JOB=$!"\n`);
      await transcript.until(/JOB=\d+/, at);
      const jobs = [...transcript.text.matchAll(/JOB=(\d+)/g)].map((m) => Number(m[1]));
      expect(jobs).toHaveLength(3);
      expectGone(...jobs);
      // Job control: each job has its own process group, so only the session reaches them all.
      for (const pid of jobs) expect(procStat(pid).pgid).not.toBe(proc.pid);
      await proc.terminate({ graceMs: 10_000 });
      for (const pid of [proc.pid, ...jobs])
        await waitFor(() => !isProcessAlive(pid), { what: `pid ${pid} gone` });
      await proc.closed;
    });

    test('interrupt terminates the foreground child once', async () => {
      await using proc = await pty(['sh', '-c', 'echo ready; exec sleep 100']);
      const transcript = new Transcript(proc);
      await waitForProgram(proc.pid, 'sleep');
      proc.interrupt();
      // A PTY child killed by a signal exits 1, as the original's PTY backend reports it.
      expect(await proc.exited).toEqual({ exitCode: 1, signal: 'SIGINT' });
      proc.interrupt();
      expect(await proc.closed).toEqual({ exitCode: 1, signal: 'SIGINT' });
      await transcript.done;
      expect(transcript.text).toBe('ready\r\n');
    });

    test('closeStdin is a no-op; writes after close reject with stdinClosed', async () => {
      await using proc = await pty(['sh', '-c', 'read line; echo "got $line"']);
      const transcript = new Transcript(proc);
      proc.closeStdin();
      await proc.write('abc\n');
      await proc.closed;
      await transcript.done;
      expect(transcript.text).toContain('got abc');
      expect(isStdinClosedError(await proc.write('x').catch((e: unknown) => e))).toBe(true);
    });

    test('a write the terminal has no room for waits without freezing the loop, and fails on close', async () => {
      await using proc = await pty(['sh', '-c', 'stty raw -echo; echo ready; exec sleep 100']);
      const transcript = new Transcript(proc);
      await transcript.until('ready');
      let settled: unknown = 'pending';
      const write = proc.write(new Uint8Array(1024 * 1024).fill(0x61)).then(
        () => 'written',
        (error: unknown) => error,
      );
      void write.then((value) => {
        settled = value;
      });
      // Timers still fire (the loop is not spinning on the full terminal) and the write stays queued.
      for (let i = 0; i < 5; i++) await setTimeout(1);
      expect(settled).toBe('pending');
      await proc.close();
      expect(isStdinClosedError(await write)).toBe(true);
    });

    test('close() kills a running child and is idempotent', async () => {
      const proc = await pty(['sleep', '100']);
      await Promise.all([proc.close(), proc.close()]);
      expect(await proc.closed).toEqual({ exitCode: 1, signal: 'SIGKILL' });
    });

    test('reports a missing cwd or program as spawnFailed before forking', async () => {
      const dir = tempDir();
      const cwdError = await pty(['true'], { cwd: join(dir, 'gone') }).catch((e: unknown) => e);
      expect(ExecError.is(cwdError) && cwdError.code).toBe('spawnFailed');
      const programError = await pty(['no-such-program-here']).catch((e: unknown) => e);
      expect(ExecError.is(programError) && programError.code).toBe('spawnFailed');
      const sizeError = await pty(['true'], { cols: 0 }).catch((e: unknown) => e);
      expect(ExecError.is(sizeError) && sizeError.code).toBe('invalidParams');
    });
  });
