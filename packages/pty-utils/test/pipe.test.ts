import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { expectGone, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { MAX_CHUNK_BYTES } from '../src/constants.ts';
import { isProcessAlive } from '../src/process-group.ts';
import { isStdinClosedError } from '../src/stdin-closed.ts';
import {
  closeSpawnedAfterEach,
  collect,
  expectClosedAtDrainCap,
  pipe,
  procStat,
  SPAWNERS,
  spawnFrom,
  Transcript,
  tempDir,
  testEnv,
  waitForProgram,
} from './helpers/harness.ts';

closeSpawnedAfterEach();

for (const spawner of SPAWNERS)
  describe(`spawnPipe, forked by ${spawner}`, () => {
    spawnFrom(spawner);

    test('round-trips stdin through cat', async () => {
      await using proc = await pipe(['cat'], { stdin: 'pipe' });
      const output = collect(proc);
      await proc.write('hello\n');
      await proc.write(new TextEncoder().encode('world\n'));
      proc.closeStdin();
      expect((await output).stdout).toBe('hello\nworld\n');
      expect(await proc.closed).toEqual({ exitCode: 0, signal: null });
    });

    test('resolves large writes once flushed, respecting backpressure', async () => {
      await using proc = await pipe(['wc', '-c'], { stdin: 'pipe' });
      const output = collect(proc);
      const block = new Uint8Array(1024 * 1024).fill(0x61);
      for (let i = 0; i < 8; i++) await proc.write(block);
      proc.closeStdin();
      expect((await output).stdout.trim()).toBe(String(8 * 1024 * 1024));
    });

    test('exposes split stdout and stderr', async () => {
      await using proc = await pipe(['sh', '-c', 'printf out; printf err >&2; printf more']);
      const { stdout, stderr } = await collect(proc);
      expect(stdout).toBe('outmore');
      expect(stderr).toBe('err');
      expect(proc.tty).toBe(false);
    });

    test('drains stderr without any stdout activity', async () => {
      // Far more than a pipe buffer on stderr alone: the child would block forever if stderr were not read.
      await using proc = await pipe(['sh', '-c', 'head -c 3000000 /dev/zero >&2; echo done']);
      const { stdout, stderr } = await collect(proc);
      expect(stderr.length).toBe(3_000_000);
      expect(stdout).toBe('done\n');
      expect((await proc.exited).exitCode).toBe(0);
    });

    test('runs the child in its own session and process group', async () => {
      await using proc = await pipe(['sh', '-c', 'cat /proc/$$/stat']);
      const { stdout } = await collect(proc);
      const fields = stdout.slice(stdout.lastIndexOf(')') + 2).split(' ');
      const [pgid, sid] = [Number(fields[2]), Number(fields[3])];
      expect(pgid).toBe(proc.pid);
      expect(sid).toBe(proc.pid);
      const ours = procStat('self');
      expect(sid).not.toBe(ours.sid);
      expect(pgid).not.toBe(ours.pgid);
    });

    test('gives the child exactly the env it was given', async () => {
      await using proc = await pipe(['/usr/bin/env'], { env: { ONLY: 'this', PATH: '/usr/bin:/bin' } });
      const lines = (await collect(proc)).stdout.trim().split('\n').sort();
      expect(lines).toEqual(['ONLY=this', 'PATH=/usr/bin:/bin']);
    });

    test('shows the arg0 override as argv[0]', async () => {
      await using proc = await pipe(['sh', '-c', 'tr "\\0" " " < /proc/$$/cmdline'], { arg0: 'custom-name' });
      expect((await collect(proc)).stdout).toBe('custom-name -c tr "\\0" " " < /proc/$$/cmdline ');
    });

    test('splits output into chunks of at most 8 KiB, in order', async () => {
      await using proc = await pipe(['sh', '-c', 'head -c 1000000 /dev/urandom | od -An -v -tx1']);
      const sizes: number[] = [];
      for await (const chunk of proc.output()) sizes.push(chunk.bytes.length);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(1_000_000);
    });

    test('maps exit codes and signals', async () => {
      await using seven = await pipe(['sh', '-c', 'exit 7']);
      expect(await seven.exited).toEqual({ exitCode: 7, signal: null });
      await using killed = await pipe(['sh', '-c', 'kill -KILL $$']);
      expect(await killed.exited).toEqual({ exitCode: 137, signal: 'SIGKILL' });
      await using termed = await pipe(['sh', '-c', 'kill -TERM $$']);
      expect(await termed.exited).toEqual({ exitCode: 143, signal: 'SIGTERM' });
    });

    test('rejects writes with stdinClosed when there is no stdin, or after closeStdin', async () => {
      await using noStdin = await pipe(['cat']);
      const error = await noStdin.write('x').catch((e: unknown) => e);
      expect(isStdinClosedError(error)).toBe(true);
      expect((await collect(noStdin)).stdout).toBe('');

      await using proc = await pipe(['cat'], { stdin: 'pipe' });
      proc.closeStdin();
      proc.closeStdin();
      expect(isStdinClosedError(await proc.write('x').catch((e: unknown) => e))).toBe(true);
      expect(await proc.closed).toEqual({ exitCode: 0, signal: null });
    });

    test('delivers output a grandchild writes after the parent exited', async () => {
      const gate = join(tempDir(), 'gate');
      const script = `(while [ ! -e '${gate}' ]; do sleep 0.01; done; echo late) & echo early`;
      await using proc = await pipe(['sh', '-c', script], { drainTimeoutMs: 60_000 });
      const transcript = new Transcript(proc);
      expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
      await transcript.until('early');
      writeFileSync(gate, '');
      await proc.closed;
      await transcript.done;
      expect(transcript.text).toBe('early\nlate\n');
    });

    test('closes at the drain cap when a grandchild keeps the pipe open', async () => {
      await using proc = await pipe(['sh', '-c', 'sleep 100 & echo $!'], { drainTimeoutMs: 50 });
      await expectClosedAtDrainCap(proc);
    });

    test('terminate reaps the child and its background children', async () => {
      await using proc = await pipe(['sh', '-c', 'sleep 100 & echo $!; sleep 100 & echo $!; wait']);
      const transcript = new Transcript(proc);
      await transcript.until(/\d+\n\d+\n/);
      const pids = transcript.text.trim().split('\n').map(Number);
      expectGone(...pids);
      const status = await proc.terminate({ graceMs: 10_000 });
      expect(status).toEqual({ exitCode: 143, signal: 'SIGTERM' });
      for (const pid of [proc.pid, ...pids]) {
        await waitFor(() => !isProcessAlive(pid), { what: `pid ${pid} gone` });
      }
    });

    test('terminate escalates to SIGKILL when SIGTERM is ignored', async () => {
      await using proc = await pipe(['sh', '-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"]);
      const transcript = new Transcript(proc);
      await transcript.until('ready');
      expect(await proc.terminate({ graceMs: 100 })).toEqual({ exitCode: 137, signal: 'SIGKILL' });
    });

    test('terminate with graceMs 0 kills at once', async () => {
      await using proc = await pipe(['sleep', '100']);
      expect(await proc.terminate({ graceMs: 0 })).toEqual({ exitCode: 137, signal: 'SIGKILL' });
    });

    test('interrupt sends SIGINT to the group and the child terminates once', async () => {
      await using proc = await pipe(['sh', '-c', 'echo ready; exec sleep 100']);
      const transcript = new Transcript(proc);
      await waitForProgram(proc.pid, 'sleep');
      proc.interrupt();
      expect(await proc.exited).toEqual({ exitCode: 130, signal: 'SIGINT' });
      // After exit every signal method is a harmless no-op.
      proc.interrupt();
      proc.kill();
      proc.resize(100, 40);
      expect(await proc.closed).toEqual({ exitCode: 130, signal: 'SIGINT' });
      await transcript.done;
      expect(transcript.text).toBe('ready\n');
    });

    test('releases every handle at closed, without close()', async () => {
      const proc = await pipe(['sh', '-c', 'echo hi; echo err >&2'], { stdin: 'pipe' });
      expect((await collect(proc)).stdout).toBe('hi\n');
      await proc.closed;
      await waitFor(() => !process.getActiveResourcesInfo().some((kind) => kind === 'ProcessWrap'));
      expect(isStdinClosedError(await proc.write('late').catch((e: unknown) => e))).toBe(true);
    });

    test('close() is idempotent and kills a running child', async () => {
      const proc = await pipe(['sleep', '100']);
      const first = proc.close();
      expect(proc.close()).toBe(first);
      await first;
      expect((await proc.closed).exitCode).toBe(137);
      await proc[Symbol.asyncDispose]();
    });

    test('output() has a single consumer', async () => {
      await using proc = await pipe(['true']);
      const output = collect(proc);
      expect(() => proc.output()).toThrow(expect.objectContaining({ code: 'unsupported' }));
      await output;
    });

    test('resolves argv[0] on the env PATH it was given, not ours', async () => {
      const dir = tempDir();
      const program = join(dir, 'my-tool');
      writeFileSync(program, '#!/bin/sh\necho tool "$@"\n');
      chmodSync(program, 0o755);
      await using proc = await pipe(['my-tool', 'a b'], { env: testEnv({ PATH: `${dir}:/usr/bin:/bin` }) });
      expect((await collect(proc)).stdout).toBe('tool a b\n');
      await using relative = await pipe(['./my-tool', 'rel'], { cwd: dir });
      expect((await collect(relative)).stdout).toBe('tool rel\n');
    });
  });

for (const spawner of SPAWNERS)
  describe(`spawn failures, forked by ${spawner}`, () => {
    spawnFrom(spawner);

    const expectSpawnFailed = async (promise: Promise<unknown>, pathInMessage: string): Promise<void> => {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ExecError.is(error)).toBe(true);
      expect((error as ExecError).code).toBe('spawnFailed');
      // The contract is that the message names the path; its wording is free.
      expect((error as ExecError).message).toContain(pathInMessage);
    };

    test('missing cwd, cwd that is a file, relative cwd', async () => {
      const dir = tempDir();
      await expectSpawnFailed(pipe(['true'], { cwd: join(dir, 'missing') }), join(dir, 'missing'));
      writeFileSync(join(dir, 'file'), '');
      await expectSpawnFailed(pipe(['true'], { cwd: join(dir, 'file') }), join(dir, 'file'));
      await expectSpawnFailed(pipe(['true'], { cwd: 'relative/dir' }), 'relative/dir');
    });

    test('program not found on the given PATH, missing, or not executable', async () => {
      const dir = tempDir();
      await expectSpawnFailed(pipe(['ls'], { env: { PATH: dir } }), 'ls');
      await expectSpawnFailed(pipe([join(dir, 'nope')]), join(dir, 'nope'));
      writeFileSync(join(dir, 'plain'), 'echo hi\n');
      await expectSpawnFailed(pipe([join(dir, 'plain')]), join(dir, 'plain'));
      await expectSpawnFailed(pipe(['plain'], { env: { PATH: dir } }), join(dir, 'plain'));
      await expectSpawnFailed(pipe([dir]), dir);
      await expectSpawnFailed(pipe([]), 'argv');
    });

    test('NUL bytes and bad env names', async () => {
      await expectSpawnFailed(pipe(['echo', 'a\0b']), 'NUL');
      await expectSpawnFailed(pipe(['true'], { env: { 'A=B': 'x' } }), 'A=B');
    });
  });
