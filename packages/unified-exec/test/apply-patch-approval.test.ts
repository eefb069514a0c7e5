import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ApprovalRequest } from '../src/index.ts';
import { createHarness, type HarnessMode } from './helpers/harness.ts';
import { useRemoteHarnesses } from './helpers/remote-server.ts';

// Outside every writable root (/tmp is one under workspace-write).
let outside: string;
beforeEach(async () => {
  outside = await mkdtemp('/var/tmp/execd-ap-approval-');
});
afterEach(() => rm(outside, { recursive: true, force: true }));

useRemoteHarnesses();

const patchFor = (path: string): string => `*** Begin Patch\n*** Add File: ${path}\n+o\n*** End Patch\n`;

for (const mode of ['local', 'remote'] as const satisfies readonly HarnessMode[]) {
  describe(`apply_patch approval (${mode})`, () => {
    test('on-request: a patch outside the project is put to the Approver; no keeps it out, yes writes it', async () => {
      const requests: ApprovalRequest[] = [];
      let answer: 'denied' | 'approved' = 'denied';
      await using harness = await createHarness(mode, {
        manager: {
          approvalPolicy: 'on-request',
          approver: (request) => {
            requests.push(request);
            return answer;
          },
        },
        environment: { permissionProfile: 'workspace-write' },
      });
      const target = join(outside, 'x.txt');
      const denied = await harness.tools.applyPatch(patchFor(target));
      expect(denied).toEqual({ text: 'rejected by user', success: false });
      expect(existsSync(target)).toBe(false);

      answer = 'approved';
      const approved = await harness.tools.applyPatch(patchFor(target));
      expect(approved.success).toBe(true);
      expect(approved.text).toMatch(
        /^Exit code: 0\nWall time: [\d.]+ seconds\nOutput:\nSuccess\. Updated the following files:\nA \/var\/tmp\//,
      );
      expect(await readFile(target, 'utf8')).toBe('o\n');
      expect(requests.map((request) => [request.command, request.cwd, request.purpose])).toEqual([
        [['apply_patch', patchFor(target).trimEnd()], harness.dir, 'initial'],
        [['apply_patch', patchFor(target).trimEnd()], harness.dir, 'initial'],
      ]);

      // Inside the project nothing is asked.
      expect((await harness.tools.applyPatch(patchFor('inside.txt'))).success).toBe(true);
      expect(requests).toHaveLength(2);
    });

    test('exec_command interception: no process is started and the reserved id is released', async () => {
      await using harness = await createHarness(mode, { manager: { approvalPolicy: 'never' } });
      const result = await harness.tools.execCommand({
        cmd: `cd sub && apply_patch <<'EOF'\n${patchFor('a.txt')}EOF`,
      });
      // `sub` does not exist yet: the folder is created with the file.
      // The inner wall time is the patch's (a remote executor takes measurable time).
      expect(result.text.replace(/^(Exit code: 0\nWall time:) [\d.]+ seconds$/m, '$1 <W> seconds')).toBe(
        'Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: <W> seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\n',
      );
      expect(await readFile(join(harness.dir, 'sub', 'a.txt'), 'utf8')).toBe('o\n');
      expect(harness.manager.size).toBe(0);
      const running = await harness.execParsed({ cmd: 'sleep 2', yield_time_ms: 250 });
      expect(running.sessionId).toBe(1000);
    });

    test('the function variant through call(): JSON arguments, serde errors', async () => {
      await using harness = await createHarness(mode, { manager: { approvalPolicy: 'never' } });
      const ok = await harness.tools.call('apply_patch', JSON.stringify({ input: patchFor('f.txt') }));
      expect(ok.success).toBe(true);
      const bad = await harness.tools.call('apply_patch', '{"input": 5}');
      expect(bad).toEqual({
        text: 'failed to parse function arguments: invalid type: integer `5`, expected a string at line 1 column 11',
        success: false,
      });
    });
  });
}
