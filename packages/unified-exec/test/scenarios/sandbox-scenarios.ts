import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ApprovalDecision, ApprovalRequest } from '../../src/index.ts';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

// Outside every workspace-write root (/tmp and $TMPDIR are writable there).
const OUTSIDE_PARENT = '/var/tmp';

/** Sandbox attempts, denials, approvals and the unsandboxed retry (spec §5.1, §4.7). */
export function defineSandboxScenarios(mode: HarnessMode): void {
  describe.skipIf(process.platform !== 'linux')(`${mode}: sandbox and approvals`, () => {
    let outside: string;
    beforeAll(async () => {
      outside = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-outside-'));
    });
    afterAll(async () => {
      await rm(outside, { recursive: true, force: true });
    });

    function approverAnswering(decision: ApprovalDecision): {
      requests: ApprovalRequest[];
      approver: (request: ApprovalRequest) => ApprovalDecision;
    } {
      const requests: ApprovalRequest[] = [];
      const approver = (request: ApprovalRequest): ApprovalDecision => {
        requests.push(request);
        return decision;
      };
      return { requests, approver };
    }

    // The denial must be seen at the early exit to be retried; a generous grace keeps that
    // deterministic on a loaded machine (the call still returns as soon as the command exits).
    const earlyExitGraceMs = 20_000;

    test('workspace-write: a command inside the workspace runs in the sandbox', async () => {
      await using h = await createHarness(mode, { environment: { permissionProfile: 'workspace-write' } });
      const result = await h.execParsed({ cmd: "echo 'hello' > inside.txt && cat inside.txt" });
      expect(result).toMatchObject({ exitCode: 0, output: 'hello\n' });
    });

    test('a write outside the roots is denied, approved on retry, and the retry succeeds', async () => {
      const { requests, approver } = approverAnswering('approved');
      await using h = await createHarness(mode, {
        manager: { approvalPolicy: 'on-failure', approver, earlyExitGraceMs },
        environment: { permissionProfile: 'workspace-write' },
      });
      const target = join(outside, 'approved.txt');
      const result = await h.execParsed({ cmd: `touch ${target} && echo created` });
      expect(result).toMatchObject({ exitCode: 0, output: 'created\n', sessionId: undefined });
      expect(existsSync(target)).toBe(true);
      expect(requests).toEqual([
        expect.objectContaining({
          purpose: 'sandbox_retry',
          reason: 'command failed; retry without sandbox?',
          processId: 1000,
          command: ['/bin/bash', '-c', `touch ${target} && echo created`],
        }),
      ]);
    });

    test('when the retry is denied, the denial output is returned as the result', async () => {
      const { requests, approver } = approverAnswering('denied');
      await using h = await createHarness(mode, {
        manager: { approvalPolicy: 'on-failure', approver, earlyExitGraceMs },
        environment: { permissionProfile: 'workspace-write' },
      });
      const target = join(outside, 'denied.txt');
      const result = await h.execParsed({ cmd: `touch ${target}` });
      expect(result.exitCode).toBe(1);
      expect(result.sessionId).toBeUndefined();
      expect(result.output.toLowerCase()).toMatch(/read-only file system|permission denied/);
      expect(existsSync(target)).toBe(false);
      expect(requests).toHaveLength(1);
      expect(h.manager.size).toBe(0);
    });

    test('under `never` a denial is returned without asking', async () => {
      const { requests, approver } = approverAnswering('approved');
      await using h = await createHarness(mode, {
        manager: { approvalPolicy: 'never', approver, earlyExitGraceMs },
        environment: { permissionProfile: 'workspace-write' },
      });
      const result = await h.execParsed({ cmd: `touch ${join(outside, 'never.txt')}` });
      expect(result.exitCode).toBe(1);
      expect(result.output.toLowerCase()).toMatch(/read-only file system|permission denied/);
      expect(requests).toEqual([]);
    });

    test('read-only: an approved `require_escalated` command runs unsandboxed at once', async () => {
      const { requests, approver } = approverAnswering('approved');
      await using h = await createHarness(mode, {
        manager: { approvalPolicy: 'on-request', approver },
        environment: { permissionProfile: 'read-only' },
      });
      const target = join(outside, 'escalated.txt');
      const result = await h.execParsed({
        cmd: `touch ${target} && echo escalated`,
        sandbox_permissions: 'require_escalated',
        justification: 'needs to write outside',
      });
      expect(result).toMatchObject({ exitCode: 0, output: 'escalated\n' });
      expect(requests).toEqual([
        expect.objectContaining({ purpose: 'initial', reason: 'needs to write outside' }),
      ]);
    });

    test('a denied escalation is reported as the original rejection text, and the id is released', async () => {
      const { approver } = approverAnswering('denied');
      await using h = await createHarness(mode, {
        manager: { approvalPolicy: 'on-request', approver },
        environment: { permissionProfile: 'read-only' },
      });
      const result = await h.exec({
        cmd: 'true',
        sandbox_permissions: 'require_escalated',
        justification: 'x',
      });
      expect(result).toEqual({
        text: 'exec_command failed for `/bin/bash -c true`: CreateProcess { message: "Rejected(\\"rejected by user\\")" }',
        success: false,
      });
      expect(h.manager.allocateProcessId()).toBe(1000);
    });
  });
}
