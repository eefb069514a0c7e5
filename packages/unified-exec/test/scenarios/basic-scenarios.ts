import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { UnifiedExecEvent } from '../../src/index.ts';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

/** Plain commands: exit codes, cwd, pipes vs tty, early exit, env injection, events. */
export function defineBasicScenarios(mode: HarnessMode): void {
  describe(`${mode}: plain commands`, () => {
    test('a short command exits in the first call, without a session id', async () => {
      await using h = await createHarness(mode);
      const result = await h.execParsed({ cmd: 'echo hello' });
      expect(result).toMatchObject({
        exitCode: 0,
        sessionId: undefined,
        output: 'hello\n',
        originalTokenCount: 2,
      });
      expect(result.chunkId).toMatch(/^[0-9a-f]{6}$/);
      expect(h.manager.size).toBe(0);
    });

    test('exit codes are preserved (pipes)', async () => {
      await using h = await createHarness(mode);
      expect(await h.execParsed({ cmd: "printf 'oops\\n'; exit 17" })).toMatchObject({
        exitCode: 17,
        output: 'oops\n',
      });
    });

    test('an early exit with a long yield reports no session id and empty output', async () => {
      await using h = await createHarness(mode);
      const result = await h.execParsed({ cmd: 'sleep 0.05', yield_time_ms: 31_415 });
      expect(result).toMatchObject({ exitCode: 0, sessionId: undefined, output: '' });
    });

    test('pipes by default, a PTY with tty: true', async () => {
      await using h = await createHarness(mode);
      const isatty = 'python3 -c "import sys; print(sys.stdin.isatty(), sys.stdout.isatty())"';
      expect(await h.execParsed({ cmd: isatty })).toMatchObject({ exitCode: 0, output: 'False False\n' });
      const tty = await h.execParsed({ cmd: isatty, tty: true });
      expect(tty).toMatchObject({ exitCode: 0, sessionId: undefined });
      expect(tty.output).toBe('True True\r\n');
    });

    test('relative workdir is joined onto the environment cwd; absolute is used as is', async () => {
      await using h = await createHarness(mode);
      await mkdir(join(h.dir, 'sub', 'deeper'), { recursive: true });
      expect((await h.execParsed({ cmd: 'pwd', workdir: 'sub/deeper' })).output).toBe(
        `${join(h.dir, 'sub', 'deeper')}\n`,
      );
      expect((await h.execParsed({ cmd: 'pwd', workdir: '/' })).output).toBe('/\n');
      expect((await h.execParsed({ cmd: 'pwd', workdir: '' })).output).toBe(`${h.dir}\n`);
    });

    test('every command gets the unified-exec variables (PAGER=cat, TERM=dumb, …) and the thread id', async () => {
      await using h = await createHarness(mode, { manager: { threadId: 'thread-under-test' } });
      const names = [
        'NO_COLOR',
        'TERM',
        'LANG',
        'LC_CTYPE',
        'LC_ALL',
        'PAGER',
        'GIT_PAGER',
        'GH_PAGER',
        'CODEX_CI',
        'CODEX_THREAD_ID',
      ];
      const script = names.map((name) => `printf '%s=%s\\n' ${name} "$${name}"`).join('; ');
      const result = await h.execParsed({ cmd: `${script}; printf 'COLORTERM=[%s]\\n' "$COLORTERM"` });
      expect(result.output).toBe(
        [
          'NO_COLOR=1',
          'TERM=dumb',
          'LANG=C.UTF-8',
          'LC_CTYPE=C.UTF-8',
          'LC_ALL=C.UTF-8',
          'PAGER=cat',
          'GIT_PAGER=cat',
          'GH_PAGER=cat',
          'CODEX_CI=1',
          'CODEX_THREAD_ID=thread-under-test',
          'COLORTERM=[]',
          '',
        ].join('\n'),
      );
    });

    test('a pager-like program gets PAGER=cat and does not wait for a key', async () => {
      await using h = await createHarness(mode);
      const result = await h.execParsed({ cmd: 'seq 1 3 | "$PAGER"; echo "pager=$PAGER"', tty: true });
      expect(result).toMatchObject({ exitCode: 0, sessionId: undefined });
      expect(result.output.replaceAll('\r\n', '\n')).toBe('1\n2\n3\npager=cat\n');
    });

    test('a non-inheritable token set by the policy is not visible to the command', async () => {
      await using h = await createHarness(mode, {
        environment: {
          envPolicy: {
            inherit: 'all',
            ignoreDefaultExcludes: true,
            exclude: [],
            set: { codex_exec_server_noise_auth_token: 'secret', KEEP_ME: 'kept' },
            includeOnly: [],
          },
        },
      });
      const result = await h.execParsed({
        cmd: 'token="$codex_exec_server_noise_auth_token"; printf "%s:%s\\n" "$([ -n "$token" ] && echo set || echo unset)" "$KEEP_ME"',
      });
      expect(result.output).toBe('unset:kept\n');
    });

    test('a login shell is used by default when allowed (`-lc`), and exactly one begin and end are emitted', async () => {
      await using h = await createHarness(mode, { environment: { allowLoginShell: true } });
      const events: UnifiedExecEvent[] = [];
      using _subscription = h.manager.onEvent((event) => events.push(event));
      const result = await h.execParsed({ cmd: '/bin/echo hello unified exec' });
      expect(result.output).toBe('hello unified exec\n');
      const begins = events.filter((event) => event.type === 'begin');
      const ends = events.filter((event) => event.type === 'end');
      expect(begins).toHaveLength(1);
      expect(begins[0]).toMatchObject({
        command: ['/bin/bash', '-lc', '/bin/echo hello unified exec'],
        cwd: h.dir,
      });
      expect(ends).toHaveLength(1);
      expect(ends[0]).toMatchObject({ exitCode: 0, status: 'completed' });
      expect((ends[0] as { aggregatedOutput: string }).aggregatedOutput).toContain('hello unified exec');
      const deltas = events.filter((event) => event.type === 'outputDelta');
      expect(Buffer.concat(deltas.map((event) => (event as { chunk: Uint8Array }).chunk)).toString()).toBe(
        'hello unified exec\n',
      );
    });

    test('2 MB of output keeps the head and the tail within the budget', async () => {
      await using h = await createHarness(mode);
      const cmd = "printf 'HEAD\\n'; head -c 2000000 /dev/zero | tr '\\0' x; printf '\\nTAIL\\n'";
      const result = await h.execParsed({ cmd, max_output_tokens: 100 });
      expect(result.exitCode).toBe(0);
      expect(result.originalTokenCount).toBe(Math.ceil(2_000_011 / 4));
      expect(
        result.output.startsWith(
          `Warning: truncated output (original token count: ${Math.ceil(2_000_011 / 4)})\n`,
        ),
      ).toBe(true);
      expect(result.output).toMatch(/\.\.\. \d+ bytes omitted \.\.\./);
      expect(result.output).toContain('HEAD');
      expect(result.output).toContain('TAIL');
      expect(result.output.length).toBeLessThan(1_000);
    });

    test('a burst of output larger than the delta channel is still complete at the tail', async () => {
      await using h = await createHarness(mode);
      const cmd = "head -c 160000 /dev/zero | tr '\\0' y; sleep 1; echo TAIL-MARKER";
      const first = await h.execParsed({ cmd, yield_time_ms: 250 });
      const sessionId = first.sessionId ?? 0;
      expect(sessionId).toBeGreaterThanOrEqual(1000);
      const polled = await h.writeParsed({ session_id: sessionId, yield_time_ms: 20_000 });
      expect(polled.output).toContain('TAIL-MARKER');
      expect(polled.exitCode).toBe(0);
    });
  });
}
