// The spec §8.1 `exec_process_*` scenarios (plus execd's additions), written once against the
// ExecBackend/ExecProcess contract (`@execd/protocol/contract`): run in-process by exec-server's
// test/local/scenarios.test.ts, and over WebSocket (msgpack and json) by exec-client's suite.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecError, OutputGapError, pathToFileUri, utf8 } from '@execd/protocol';
import type { ExecBackend } from '@execd/protocol/contract';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { collectEvents, execParams, outputText, readUntil, summarise } from './exec-process-helpers.ts';
import { isProcessRunning } from './process-alive.ts';
import { waitFor } from './wait-for.ts';

/**
 * Defines the scenario suite for one backend. `makeBackend` is called once per test; the test
 * closes it (which must kill everything it started).
 */
export function defineExecProcessScenarios(label: string, makeBackend: () => Promise<ExecBackend>): void {
  describe(`exec_process scenarios (${label})`, () => {
    let scratch = '';

    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'execd-scenarios-'));
    });

    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    test('exec_process_starts_and_exits', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(execParams('proc-1', ['true']));
      expect(proc.processId).toBe('proc-1');
      expect(proc.sandboxType).toBe('none');
      const { last } = await readUntil(proc);
      expect(last).toMatchObject({ exited: true, exitCode: 0, closed: true, failure: null });
    });

    test('exec_process_streams_output', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(
        execParams('proc-1', ['sh', '-c', "sleep 0.05; printf 'session output\\n'"]),
      );
      const { text, last } = await readUntil(proc);
      expect(text).toBe('session output\n');
      expect(last).toMatchObject({ exitCode: 0, closed: true });
    });

    test('exec_process_pushes_events', async () => {
      await using backend = await makeBackend();
      const script = "printf 'event output\\n'; sleep 0.2; printf 'event err\\n' >&2; sleep 0.2; exit 7";
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script]));
      const events = await collectEvents(proc);
      expect(events.map(summarise)).toEqual([
        { type: 'output', seq: 1, stream: 'stdout', text: 'event output\n' },
        { type: 'output', seq: 2, stream: 'stderr', text: 'event err\n' },
        { type: 'exited', seq: 3, exitCode: 7 },
        { type: 'closed', seq: 4 },
      ]);
    });

    test('exec_process_replays_events_after_close', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', "printf 'replay output\\n'"]));
      await readUntil(proc);
      const events = await collectEvents(proc);
      expect(outputText(events)).toBe('replay output\n');
      expect(events.at(-2)).toMatchObject({ type: 'exited', exitCode: 0 });
      expect(events.at(-1)).toMatchObject({ type: 'closed' });
      // A second subscription replays the same history.
      expect((await collectEvents(proc)).map(summarise)).toEqual(events.map(summarise));
    });

    test('exec_process_retains_output_after_exit_until_streams_close', async () => {
      await using backend = await makeBackend();
      const release = join(scratch, 'release-late-output');
      // The background child keeps stdout open and writes only after the parent has exited.
      const script =
        '( while [ ! -e "$1" ]; do sleep 0.02; done; printf \'late output after exit\\n\' ) & exit 0';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script, 'sh', release]));
      const exited = await proc.read({ waitMs: 2000 });
      const exitRead = exited.exited ? exited : (await readUntil(proc, { until: (o) => o.last.exited })).last;
      expect(exitRead).toMatchObject({ chunks: [], exited: true, exitCode: 0, closed: false });
      const exitSeq = exitRead.nextSeq - 1;
      await writeFile(release, '');
      const late = await readUntil(proc, { afterSeq: exitSeq, until: (o) => o.text.length > 0 });
      expect(late.stdout).toBe('late output after exit\n');
      expect(late.last.chunks[0]!.seq).toBeGreaterThan(exitSeq);
      const closed = await readUntil(proc, { afterSeq: late.afterSeq });
      expect(closed.last).toMatchObject({ closed: true, exitCode: 0 });
    });

    test('exec_process_write_then_read (tty)', async () => {
      await using backend = await makeBackend();
      const script = 'read line; printf "from-stdin:%s\\n" "$line"';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script], { tty: true }));
      expect(await proc.write(utf8('hello\n'))).toEqual({ status: 'accepted' });
      const { text, last } = await readUntil(proc);
      expect(text).toContain('from-stdin:hello');
      expect(last.exitCode).toBe(0);
      expect(last.chunks.every((chunk) => chunk.stream === 'pty')).toBe(true);
    });

    test('exec_process_write_then_read_without_tty', async () => {
      await using backend = await makeBackend();
      const script = 'read line; printf "from-stdin:%s\\n" "$line"';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script], { pipeStdin: true }));
      expect(await proc.write(utf8('hello\n'))).toEqual({ status: 'accepted' });
      const { text, last } = await readUntil(proc);
      expect(text).toBe('from-stdin:hello\n');
      expect(last.exitCode).toBe(0);
    });

    test('exec_process_rejects_write_without_pipe_stdin', async () => {
      await using backend = await makeBackend();
      const script = 'if read line; then printf "line:%s\\n" "$line"; else printf "eof\\n"; fi';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script]));
      expect(await proc.write(utf8('ignored\n'))).toEqual({ status: 'stdinClosed' });
      const { text, last } = await readUntil(proc);
      expect(text).toBe('eof\n');
      expect(last.exitCode).toBe(0);
    });

    test('exec_process_dedupes_retried_write_ids', async () => {
      await using backend = await makeBackend();
      const script = 'read a; printf "line:%s\\n" "$a"; read b; printf "line:%s\\n" "$b"';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script], { pipeStdin: true }));
      expect(await proc.write(utf8('first\n'), { writeId: 'write-1' })).toEqual({ status: 'accepted' });
      expect(await proc.write(utf8('first\n'), { writeId: 'write-1' })).toEqual({ status: 'accepted' });
      expect(await proc.write(utf8('second\n'), { writeId: 'write-2' })).toEqual({ status: 'accepted' });
      const { text } = await readUntil(proc);
      expect(text).toBe('line:first\nline:second\n');
    });

    test('exec_process_signal_interrupts_process', async () => {
      await using backend = await makeBackend();
      const script =
        'trap \'printf "signal:2\\n"; exit 7\' INT; printf "ready\\n"; while :; do sleep 0.05; done';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script]));
      const ready = await readUntil(proc, { until: (o) => o.text.includes('ready\n') });
      await proc.interrupt();
      const { text, last } = await readUntil(proc, { afterSeq: ready.afterSeq });
      expect(text).toContain('signal:2');
      expect(last).toMatchObject({ exitCode: 7, closed: true });
    });

    test('exec_process_preserves_queued_events_before_subscribe', async () => {
      await using backend = await makeBackend();
      const marker = join(scratch, 'queued-marker');
      const script = 'printf "queued output\\n"; : > "$1"';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script, 'sh', marker]));
      // The output exists before anyone reads or subscribes.
      await waitFor(() => existsSync(marker), { what: 'the marker file' });
      const events = await collectEvents(proc);
      expect(outputText(events)).toBe('queued output\n');
      expect(events.find((e) => e.type === 'exited')).toMatchObject({ exitCode: 0 });
    });

    test('exec_process_terminate_reaps_the_tree', async () => {
      await using backend = await makeBackend();
      const script = 'sleep 300 & printf "pids %s %s\\n" "$$" "$!"; wait';
      const proc = await backend.start(execParams('proc-1', ['sh', '-c', script]));
      const started = await readUntil(proc, { until: (o) => /pids \d+ \d+\n/.test(o.text) });
      const pids = started.text
        .match(/pids (\d+) (\d+)/)!
        .slice(1)
        .map(Number);
      expect(await proc.terminate()).toEqual({ running: true });
      const { last } = await readUntil(proc, { afterSeq: started.afterSeq });
      expect(last).toMatchObject({ exited: true, exitCode: 137, closed: true });
      await waitFor(() => pids.every((pid) => !isProcessRunning(pid)), { what: 'the tree to be gone' });
    });

    test('duplicate_process_ids_allow_only_one_successful_start', async () => {
      await using backend = await makeBackend();
      const params = execParams('dup', ['sleep', '30']);
      const results = await Promise.allSettled([backend.start(params), backend.start(params)]);
      const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(winners).toHaveLength(1);
      const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(ExecError.is(loser.reason) && loser.reason.code).toBe('invalidRequest');
      expect((loser.reason as Error).message).toBe('process dup already exists');
      expect(await winners[0]!.terminate()).toEqual({ running: true });
    });

    test('terminate_reports_false_after_process_exit', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(execParams('proc-1', ['sleep', '0.1']));
      await readUntil(proc, { until: (o) => o.last.exited });
      expect(await proc.terminate()).toEqual({ running: false });
    });

    test('process/start errors: empty argv, bad cwd, spawn failure', async () => {
      await using backend = await makeBackend();
      const failure = (promise: Promise<unknown>) =>
        promise.then(
          () => undefined,
          (error: unknown) => error,
        );
      const empty = await failure(backend.start(execParams('a', [])));
      expect(ExecError.is(empty) && [empty.code, empty.message]).toEqual([
        'invalidParams',
        'argv must not be empty',
      ]);
      const badCwd = await failure(backend.start(execParams('b', ['true'], { cwd: '/tmp' })));
      expect(ExecError.is(badCwd) && badCwd.code).toBe('invalidParams');
      expect((badCwd as Error).message).toMatch(/^cwd URI `\/tmp` is not valid on this exec-server host: /);
      const missing = await failure(backend.start(execParams('c', ['/nonexistent/execd-no-such-program'])));
      expect(ExecError.is(missing) && missing.code).toBe('internal');
      // A failed start leaves no entry: the id is free again.
      const proc = await backend.start(execParams('c', ['true']));
      expect((await readUntil(proc)).last.exitCode).toBe(0);
    });

    test('execd: a read or events() behind retention reports the gap', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(execParams('proc-1', ['head', '-c', '3000000', '/dev/zero']));
      // Whether this reader keeps up with the child depends on the machine's load; only the end counts.
      const all = await readUntil(proc);
      expect(all.last).toMatchObject({ exitCode: 0, closed: true });
      const replay = await proc.read({ afterSeq: 0 });
      expect(replay.firstRetainedSeq).toBeGreaterThan(1);
      expect(replay.chunks[0]!.seq).toBe(replay.firstRetainedSeq);
      const gap = await collectEvents(proc, { afterSeq: 0 }).catch((error: unknown) => error);
      expect(gap).toBeInstanceOf(OutputGapError);
      expect((gap as OutputGapError).firstRetainedSeq).toBeGreaterThan(1);
      // Without a cursor, events() replays what is still retained, without an error.
      const retained = await collectEvents(proc);
      expect(retained.at(-1)).toMatchObject({ type: 'closed' });
    });

    test('shell_snapshot_v2_restores_profile_state_once (bash)', async () => {
      await using backend = await makeBackend();
      const bash = ['/usr/bin/bash', '/bin/bash'].find((path) => existsSync(path))!;
      const home = join(scratch, 'snapshot-home');
      await mkdir(home, { recursive: true });
      const rc =
        'printf x >> "$HOME/captures"\nexport PROFILE_VAR=from-profile\nprofile_fn() { printf fn-ok; }\n';
      await writeFile(join(home, '.bashrc'), rc);
      const shellSnapshot = { scopeId: 'scenario-scope', shell: { name: 'bash', path: bash } };
      const script = 'printf "%s|%s\\n" "$PROFILE_VAR" "$(profile_fn)"';
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
      for (const run of [1, 2]) {
        const proc = await backend.start(
          execParams(`snap-${run}`, [bash, '-lc', script], { env, shellSnapshot }),
        );
        const { stdout, stderr, last } = await readUntil(proc);
        expect({ stdout, stderr, exitCode: last.exitCode }).toEqual({
          stdout: 'from-profile|fn-ok\n',
          stderr: '',
          exitCode: 0,
        });
      }
      // The profile ran once: the second launch restored the captured state.
      expect(await readFile(join(home, 'captures'), 'utf8')).toBe('x');
      const badScope = { scopeId: '', shell: { name: 'bash', path: bash } };
      const error = await backend
        .start(execParams('snap-bad', [bash, '-lc', 'true'], { env, shellSnapshot: badScope }))
        .catch((thrown: unknown) => thrown);
      expect(ExecError.is(error) && [error.code, error.message]).toEqual([
        'invalidParams',
        'shell snapshot scope must be non-empty and at most 256 bytes',
      ]);
    });

    test.skipIf(process.platform !== 'linux')('sandboxed_process_reports_denied_write (bwrap)', async () => {
      await using backend = await makeBackend();
      const target = join(scratch, 'denied-write');
      const proc = await backend.start(
        execParams('proc-1', ['sh', '-c', 'printf x > "$1"', 'sh', target], {
          cwd: pathToFileUri(scratch),
          sandbox: { profile: 'read-only' },
        }),
      );
      expect(proc.sandboxType).toBe('linuxSeccomp');
      const { stderr, last } = await readUntil(proc);
      expect(stderr.toLowerCase()).toContain('read-only file system');
      expect(last).toMatchObject({ exited: true, closed: true, sandboxDenied: true });
      expect(last.exitCode).not.toBe(0);
      const exited = (await collectEvents(proc)).find((event) => event.type === 'exited');
      expect(exited).toMatchObject({ sandboxDenied: true });
      expect(existsSync(target)).toBe(false);
    });

    test('execd: process/resize reaches a tty child', async () => {
      await using backend = await makeBackend();
      const proc = await backend.start(
        execParams('proc-1', ['sh', '-c', 'read x; stty size'], { tty: true }),
      );
      expect(await proc.resize(100, 30)).toEqual({ resized: true });
      await proc.write(utf8('\n'));
      const { text } = await readUntil(proc);
      expect(text).toContain('30 100');
      expect(await proc.resize(100, 30)).toEqual({ resized: false });
    });
  });
}
