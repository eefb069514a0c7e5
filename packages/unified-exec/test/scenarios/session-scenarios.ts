import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pidsMatching, uniqueMarker, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { STDIN_CLOSED_MESSAGE, type UnifiedExecEvent } from '../../src/index.ts';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

/** Sessions: write_stdin, polls, Ctrl-C, stdin closed, unknown ids, termination. */
export function defineSessionScenarios(mode: HarnessMode): void {
  describe(`${mode}: sessions`, () => {
    test('a slow command returns a session id, and a later poll gets its output and exit', async () => {
      await using h = await createHarness(mode);
      const first = await h.execParsed({ cmd: 'sleep 2; echo ready', yield_time_ms: 250 });
      expect(first).toMatchObject({ sessionId: 1000, exitCode: undefined, output: '' });
      const polled = await h.writeParsed({ session_id: 1000, yield_time_ms: 20_000 });
      expect(polled).toMatchObject({ sessionId: undefined, exitCode: 0, output: 'ready\n' });
      expect(h.manager.size).toBe(0);
    });

    test('a tty cat echoes writes, keeps its session id, and Ctrl-D ends it', async () => {
      await using h = await createHarness(mode);
      const events: UnifiedExecEvent[] = [];
      using _subscription = h.manager.onEvent((event) => events.push(event));
      const start = await h.execParsed({ cmd: 'cat', tty: true, yield_time_ms: 500 });
      expect(start).toMatchObject({ sessionId: 1000, exitCode: undefined, output: '' });
      const echoed = await h.writeParsed({ session_id: 1000, chars: 'hello\n', yield_time_ms: 1000 });
      expect(echoed).toMatchObject({ sessionId: 1000, exitCode: undefined, output: 'hello\r\nhello\r\n' });
      const ended = await h.writeParsed({ session_id: 1000, chars: '\u0004', yield_time_ms: 5000 });
      expect(ended).toMatchObject({ sessionId: undefined, exitCode: 0 });
      expect(ended.chunkId).toMatch(/^[0-9a-f]{6}$/);
      const again = await h.write({ session_id: 1000, chars: 'x' });
      expect(again).toEqual({ text: 'write_stdin failed: Unknown process id 1000', success: false });
      expect(h.manager.size).toBe(0);
      await waitFor(() => events.some((event) => event.type === 'end'), { what: 'the end event' });
      const kinds = events.filter((event) => event.type !== 'outputDelta').map((event) => event.type);
      expect(kinds).toEqual(['begin', 'terminalInteraction', 'terminalInteraction', 'end']);
      expect(events.find((event) => event.type === 'end')).toMatchObject({ exitCode: 0, processId: 1000 });
    });

    test('a python REPL in a tty keeps its state across write_stdin calls', async () => {
      await using h = await createHarness(mode);
      const start = await h.execParsed({ cmd: 'python3 -q', tty: true, yield_time_ms: 1000 });
      const sessionId = start.sessionId ?? 0;
      expect(sessionId).toBe(1000);
      await h.writeParsed({ session_id: sessionId, chars: 'x = 40\n', yield_time_ms: 1000 });
      let seen = '';
      seen += (await h.writeParsed({ session_id: sessionId, chars: 'print(x + 2)\n', yield_time_ms: 2000 }))
        .output;
      // A slow machine may print the answer after the yield: poll until it shows up.
      while (!seen.includes('42')) {
        const polled = await h.writeParsed({ session_id: sessionId, yield_time_ms: 5000 });
        seen += polled.output;
        if (polled.sessionId === undefined) break;
      }
      expect(seen).toContain('42');
      const exited = await h.writeParsed({ session_id: sessionId, chars: 'exit()\n', yield_time_ms: 10_000 });
      expect(exited).toMatchObject({ sessionId: undefined, exitCode: 0 });
    });

    test('a command that reads stdin on pipes gets EOF at once (no hang)', async () => {
      await using h = await createHarness(mode);
      const cmd = 'python3 -c "import sys; data = sys.stdin.read(); print(\'eof:\' + repr(data))"';
      const result = await h.execParsed({ cmd, yield_time_ms: 30_000 });
      expect(result).toMatchObject({ exitCode: 0, sessionId: undefined, output: "eof:''\n" });
    });

    test('writing to a pipe session is refused with the stdin-closed text', async () => {
      await using h = await createHarness(mode);
      const marker = uniqueMarker();
      const start = await h.execParsed({ cmd: `sleep 60; : ${marker}`, yield_time_ms: 250 });
      expect(start.sessionId).toBe(1000);
      expect(await h.write({ session_id: 1000, chars: 'hello\n' })).toEqual({
        text: `write_stdin failed: ${STDIN_CLOSED_MESSAGE}`,
        success: false,
      });
      // The session is still there.
      expect(h.manager.listProcesses()).toEqual([
        expect.objectContaining({ processId: 1000, running: true }),
      ]);
    });

    test('Ctrl-C interrupts a pipe session: the default action reports exit 130', async () => {
      await using h = await createHarness(mode);
      const start = await h.execParsed({ cmd: 'exec sleep 30', yield_time_ms: 250 });
      expect(start.sessionId).toBe(1000);
      const interrupted = await h.writeParsed({ session_id: 1000, chars: '\u0003', yield_time_ms: 10_000 });
      expect(interrupted).toMatchObject({ sessionId: undefined, exitCode: 130 });
    });

    test('Ctrl-C reaches a trap in a pipe session', async () => {
      await using h = await createHarness(mode);
      const cmd = "trap 'echo INT-TRAP; exit 42' INT; echo ready; while :; do sleep 0.1; done";
      const start = await h.execParsed({ cmd, yield_time_ms: 500 });
      expect(start.output).toBe('ready\n');
      const interrupted = await h.writeParsed({ session_id: 1000, chars: '\u0003', yield_time_ms: 10_000 });
      expect(interrupted).toMatchObject({ sessionId: undefined, exitCode: 42 });
      expect(interrupted.output).toContain('INT-TRAP');
    });

    test('Ctrl-C in a tty goes through the line discipline: `exec sleep 30` ends with 1', async () => {
      await using h = await createHarness(mode);
      const start = await h.execParsed({ cmd: 'exec sleep 30', tty: true, yield_time_ms: 250 });
      expect(start.sessionId).toBe(1000);
      const interrupted = await h.writeParsed({ session_id: 1000, chars: '\u0003', yield_time_ms: 10_000 });
      // The original's PTY backend reports a child killed by a signal as exit code 1.
      expect(interrupted).toMatchObject({ sessionId: undefined, exitCode: 1 });
    });

    test('write_stdin on two sessions runs in parallel (each waits for a file the other creates)', async () => {
      await using h = await createHarness(mode);
      const script = (mine: string, theirs: string): string =>
        `read _; touch ${mine}; while [ ! -e ${theirs} ]; do sleep 0.05; done; echo done-${mine}`;
      const a = await h.execParsed({ cmd: script('a.flag', 'b.flag'), tty: true, yield_time_ms: 500 });
      const b = await h.execParsed({ cmd: script('b.flag', 'a.flag'), tty: true, yield_time_ms: 500 });
      expect([a.sessionId, b.sessionId]).toEqual([1000, 1001]);
      const [resultA, resultB] = await Promise.all([
        h.writeParsed({ session_id: 1000, chars: 'go\n', yield_time_ms: 30_000 }),
        h.writeParsed({ session_id: 1001, chars: 'go\n', yield_time_ms: 30_000 }),
      ]);
      expect(resultA.output).toContain('done-a.flag');
      expect(resultB.output).toContain('done-b.flag');
      expect([resultA.exitCode, resultB.exitCode]).toEqual([0, 0]);
    });

    test('a session keeps its shell state across calls; another session does not see it', async () => {
      await using h = await createHarness(mode);
      await h.execParsed({ cmd: 'bash --norc --noprofile -i', tty: true, yield_time_ms: 500 });
      await h.writeParsed({ session_id: 1000, chars: 'export UEXEC_VAR=kept\n', yield_time_ms: 500 });
      const other = await h.execParsed({ cmd: 'echo "[$UEXEC_VAR]"' });
      expect(other.output).toBe('[]\n');
      let seen = (
        await h.writeParsed({ session_id: 1000, chars: 'echo "value=$UEXEC_VAR"\n', yield_time_ms: 2000 })
      ).output;
      while (!seen.includes('value=kept'))
        seen += (await h.writeParsed({ session_id: 1000, yield_time_ms: 5000 })).output;
      expect(h.manager.listProcesses()).toEqual([
        expect.objectContaining({
          processId: 1000,
          command: 'bash --norc --noprofile -i',
          cwd: h.dir,
          running: true,
        }),
      ]);
      expect(await h.manager.terminateProcess(1000)).toBe(true);
      expect(await h.manager.terminateProcess(1000)).toBe(false);
      expect(h.manager.listProcesses()).toEqual([]);
    });

    test('a completed session is forgotten: the next write_stdin is an unknown process id', async () => {
      await using h = await createHarness(mode);
      await h.execParsed({ cmd: 'bash --norc --noprofile -i', tty: true, yield_time_ms: 500 });
      const exited = await h.writeParsed({ session_id: 1000, chars: 'exit 5\n', yield_time_ms: 10_000 });
      expect(exited).toMatchObject({ sessionId: undefined, exitCode: 5 });
      expect((await h.write({ session_id: 1000 })).text).toBe('write_stdin failed: Unknown process id 1000');
      expect(h.manager.size).toBe(0);
    });

    test('a long-running session survives its call and is killed by terminateAll', async () => {
      await using h = await createHarness(mode);
      const marker = uniqueMarker();
      const start = await h.execParsed({ cmd: `sleep 600; : ${marker}`, yield_time_ms: 250 });
      expect(start.sessionId).toBe(1000);
      expect(pidsMatching(marker).length).toBeGreaterThan(0);
      // Nothing ends it between calls ("turn end" and "interrupt" do not kill stored processes).
      expect(h.manager.listProcesses()).toEqual([
        expect.objectContaining({ processId: 1000, running: true }),
      ]);
      await h.manager.terminateAll();
      await waitFor(() => pidsMatching(marker).length === 0, { what: 'the session to die' });
      expect((await h.write({ session_id: 1000 })).text).toBe('write_stdin failed: Unknown process id 1000');
    });

    test('terminating a process during a poll makes the poll report it gone', async () => {
      await using h = await createHarness(mode);
      await h.execParsed({ cmd: 'sleep 600', yield_time_ms: 250 });
      const poll = h.writeParsed({ session_id: 1000, yield_time_ms: 60_000 });
      // Terminate does not need the interaction lock the poll holds.
      expect(await h.manager.terminateProcess(1000)).toBe(true);
      expect((await poll).sessionId).toBeUndefined();
    });

    test('pruning at 65 sessions evicts the least recently used one and kills it', async () => {
      await using h = await createHarness(mode);
      const marker = uniqueMarker('prune');
      const first = await h.execParsed({ cmd: `sleep 600; : ${marker}-first`, yield_time_ms: 250 });
      expect(first.sessionId).toBe(1000);
      const rest = await Promise.all(
        Array.from({ length: 63 }, (_, index) =>
          h.execParsed({ cmd: `sleep 600; : ${marker}-${index}`, yield_time_ms: 250 }),
        ),
      );
      expect(rest.every((result) => result.sessionId !== undefined)).toBe(true);
      expect(h.manager.size).toBe(64);
      expect(pidsMatching(`${marker}-first`).length).toBeGreaterThan(0);
      const last = await h.execParsed({ cmd: `sleep 600; : ${marker}-last`, yield_time_ms: 250 });
      expect(last.sessionId).toBeDefined();
      expect(h.manager.size).toBe(64);
      expect((await h.write({ session_id: 1000 })).text).toBe('write_stdin failed: Unknown process id 1000');
      await waitFor(() => pidsMatching(`${marker}-first`).length === 0, {
        what: 'the pruned process to die',
      });
      await h.manager.terminateAll();
      await waitFor(() => pidsMatching(marker).length === 0, { what: 'every session to die' });
    });

    test('a stored process exits while nobody polls; its file is written and the next poll reports it', async () => {
      await using h = await createHarness(mode);
      const start = await h.execParsed({
        cmd: 'sleep 1; touch done.flag; echo finished',
        yield_time_ms: 250,
      });
      expect(start.sessionId).toBe(1000);
      await waitFor(() => existsSync(join(h.dir, 'done.flag')));
      const polled = await h.writeParsed({ session_id: 1000, yield_time_ms: 5000 });
      expect(polled).toMatchObject({ exitCode: 0, sessionId: undefined, output: 'finished\n' });
    });
  });
}
