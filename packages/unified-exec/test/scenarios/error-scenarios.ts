import { describe, expect, test } from 'vitest';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

/** Errors come back to the model as text, never thrown out of a handler. */
export function defineErrorScenarios(mode: HarnessMode): void {
  describe(`${mode}: errors as text`, () => {
    test('argument errors are the original texts, and no id is consumed', async () => {
      await using h = await createHarness(mode);
      expect(await h.exec('{}')).toEqual({
        text: 'failed to parse function arguments: missing field `cmd` at line 1 column 2',
        success: false,
      });
      expect(await h.exec({ cmd: 'echo hi', justification: 'please' })).toEqual({
        text: '`justification` requires an explicit `sandbox_permissions`; use `sandbox_permissions: "require_escalated"` for unsandboxed execution, or omit `justification`.',
        success: false,
      });
      expect(await h.exec({ cmd: 'echo hi', login: true })).toEqual({
        text: 'login shell is disabled by config; omit `login` or set it to false.',
        success: false,
      });
      expect(await h.exec({ cmd: 'echo hi', environment_id: 'elsewhere' })).toEqual({
        text: 'unknown turn environment id `elsewhere`',
        success: false,
      });
      expect(await h.write({})).toEqual({
        text: 'failed to parse function arguments: missing field `session_id` at line 1 column 2',
        success: false,
      });
      expect(await h.write({ session_id: 999 })).toEqual({
        text: 'write_stdin failed: Unknown process id 999',
        success: false,
      });
      expect((await h.execParsed({ cmd: 'true' })).exitCode).toBe(0);
      expect(h.manager.allocateProcessId()).toBe(1000);
    });

    test('a shell that cannot be spawned is a CreateProcess error naming the command; the id is released', async () => {
      await using h = await createHarness(mode);
      const result = await h.exec({ cmd: 'echo hi', shell: '/nonexistent/bash' });
      expect(result.success).toBe(false);
      expect(result.text).toMatch(
        /^exec_command failed for `\/nonexistent\/bash -c 'echo hi'`: CreateProcess \{ message: "Rejected\(\\"Failed to create unified exec process: .+\\"\)" \}$/,
      );
      expect(h.manager.size).toBe(0);
      expect(h.manager.allocateProcessId()).toBe(1000);
    });

    test('after close, commands are refused and nothing is left running', async () => {
      const h = await createHarness(mode);
      await h.execParsed({ cmd: 'sleep 600', yield_time_ms: 250 });
      await h.manager.close();
      const result = await h.exec({ cmd: 'echo hi' });
      expect(result.success).toBe(false);
      expect(result.text).toContain('the process manager is closed');
      await h.close();
    });
  });
}
