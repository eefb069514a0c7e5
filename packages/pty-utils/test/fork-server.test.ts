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

async function startServer(): Promise<ForkServer> {
  const server = await ForkServer.start();
  if (server === undefined) throw new Error('the fork server cannot run here');
  servers.push(server);
  return server;
}

/** The signal lines of a child's /proc status: what it ignores, blocks, catches. */
const SIGNAL_LINES = 'grep -E "^Sig(Ign|Blk|Cgt)" /proc/self/status';

describe.skipIf(process.platform !== 'linux')('the fork server', () => {
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
    const lines = (await collect(forked)).stdout;
    expect(lines).toBe((await collect(direct)).stdout);
    // The helper ignores HUP, INT, QUIT, PIPE and TERM itself; the command must not.
    const ignored = BigInt(`0x${/SigIgn:\t([0-9a-f]+)/.exec(lines)?.[1]}`);
    expect(ignored & 0x5007n).toBe(0n);
    expect(lines).toContain('SigBlk:\t0000000000000000');
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
        pipe(['/bin/sh', '-c', `read line; echo "$line ${i}"; exit ${i % 7}`], { forkServer, stdin: 'pipe' }),
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
});
