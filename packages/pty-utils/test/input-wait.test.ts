import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { type InputWaitReason, probeInputWait } from '../src/input-wait.ts';
import { closeSpawnedAfterEach, pipe, pty, Transcript, tempDir, waitForProgram } from './helpers/harness.ts';

closeSpawnedAfterEach();

/** Probes `times` times in a row and returns every answer. */
async function probes(pid: number, times: number): Promise<InputWaitReason[]> {
  const answers: InputWaitReason[] = [];
  for (let index = 0; index < times; index++) answers.push(await probeInputWait(pid));
  return answers;
}

describe.skipIf(process.platform !== 'linux')('probeInputWait', () => {
  test('a python REPL at its prompt waits; while it evaluates it does not', async () => {
    await using proc = await pty(['python3', '-i', '-q']);
    const transcript = new Transcript(proc);
    let at = await transcript.until('>>> ');
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'REPL waiting' });
    // A busy loop that announces itself, then computes for a long time without output.
    await proc.write('print("spin"); import time\n');
    at = await transcript.until('>>> ', at);
    await proc.write('t = time.time()\n');
    at = await transcript.until('>>> ', at);
    await proc.write('print("begin")\nwhile time.time() - t < 60: pass\n\n');
    at = await transcript.until('begin', at);
    expect((await probes(proc.pid, 5)).filter((reason) => reason === 'waiting')).toEqual([]);
    proc.interrupt();
    await transcript.until('>>> ', at);
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'REPL waiting again' });
    await proc.write('exit()\n');
    await proc.exited;
    await transcript.done;
  });

  test('bash `read` waits, and the answer follows the input', async () => {
    await using proc = await pty(['bash', '-c', 'read -r line; echo "got $line"; read -r again']);
    const transcript = new Transcript(proc);
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'read waiting' });
    await proc.write('hello\n');
    await transcript.until('got hello');
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'second read' });
    await proc.write('bye\n');
    expect((await proc.exited).exitCode).toBe(0);
    await transcript.done;
  });

  test('a job in the foreground of an interactive shell is judged, not the shell', async () => {
    await using proc = await pty(['bash', '--norc', '--noprofile', '-i'], {
      env: { PS1: '$ ', TERM: 'dumb' },
    });
    const transcript = new Transcript(proc);
    let at = await transcript.until('$ ');
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'shell prompt' });
    await proc.write('sleep 60 | cat\n');
    at = await transcript.until('sleep 60 | cat', at);
    await waitFor(() => procsNamed(proc.pid, 'sleep'), { what: 'sleep started' });
    expect(await probes(proc.pid, 5)).not.toContain('waiting');
    await proc.write('\u0003'); // ^C: the terminal interrupts the foreground job
    await transcript.until('$ ', at);
    await proc.write('exit\n');
    await proc.exited;
    await transcript.done;
  });

  test('sleeping, computing and reading a pipe or a file are not waiting for input', async () => {
    for (const argv of [
      ['sleep', '60'],
      ['bash', '-c', 'while :; do :; done'],
      ['bash', '-c', 'sleep 60 | cat'],
      ['bash', '-c', 'cat /dev/zero > /dev/null'],
    ]) {
      await using proc = await pty(argv);
      const transcript = new Transcript(proc);
      await waitForProgram(proc.pid, argv[0] === 'sleep' ? 'sleep' : 'bash');
      const answers = await probes(proc.pid, 5);
      expect(answers, argv.join(' ')).not.toContain('waiting');
      proc.kill('SIGKILL');
      await transcript.done;
    }
  });

  test('a burst writer is never judged waiting until it really reads the terminal', async () => {
    // After its bursts the writer blocks on a FIFO (not the terminal) until the test has stopped
    // probing: every probe below samples the bursts or that wait, never the final input().
    const fifo = join(tempDir(), 'go');
    execFileSync('mkfifo', [fifo]);
    const script = [
      'import sys, time',
      'for burst in range(30):',
      '    for line in range(50): print("burst", burst, line)',
      '    sys.stdout.flush(); time.sleep(0.02)',
      'print("done"); sys.stdout.flush()',
      `open(${JSON.stringify(fifo)}).read()`,
      'input()',
    ].join('\n');
    await using proc = await pty(['python3', '-c', script]);
    const transcript = new Transcript(proc);
    const answers: InputWaitReason[] = [];
    while (!transcript.text.includes('done')) answers.push(await probeInputWait(proc.pid));
    answers.push(...(await probes(proc.pid, 3)));
    expect(answers.length).toBeGreaterThan(3);
    expect(answers).not.toContain('waiting');
    await writeFile(fifo, 'go');
    await waitFor(async () => (await probeInputWait(proc.pid)) === 'waiting', { what: 'input()' });
    await proc.write('\n');
    expect((await proc.exited).exitCode).toBe(0);
    await transcript.done;
  });

  test('a pipe child has no terminal: unknown', async () => {
    await using proc = await pipe(['sleep', '60']);
    await waitForProgram(proc.pid, 'sleep');
    expect(await probeInputWait(proc.pid)).toBe('unknown');
    proc.kill('SIGKILL');
    await proc.exited;
  });
});

/** True while a process named `name` runs in session `sid`. */
async function procsNamed(sid: number, name: string): Promise<boolean> {
  const { readdir, readFile } = await import('node:fs/promises');
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm === name && Number(fields[3]) === sid) return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}
