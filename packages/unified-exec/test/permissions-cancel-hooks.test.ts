import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolText, waitFor } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  type ApprovalDecision,
  type ApprovalRequest,
  Environment,
  type LocalEnvironmentOptions,
  type ToolHooks,
  UnifiedExecProcessManager,
  type UnifiedExecProcessManagerOptions,
  UnifiedExecTools,
} from '../src/index.ts';

// Outside every sandbox root (read-only and workspace-write never make /var/tmp writable).
const OUTSIDE_PARENT = '/var/tmp';
// The denial must be seen at the early exit; generous on a loaded machine.
const EARLY_EXIT_GRACE_MS = 20_000;

let workspace: string;
let extra: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'uexec-perm-'));
  extra = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-extra-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of [workspace, extra]) await rm(dir, { recursive: true, force: true });
});

function session(
  manager: UnifiedExecProcessManagerOptions,
  environment: Partial<LocalEnvironmentOptions> = {},
  tools: { execPermissionApprovals?: boolean; hooks?: ToolHooks } = {},
): UnifiedExecTools {
  const env = Environment.local({
    cwd: workspace,
    shell: '/bin/bash',
    allowLoginShell: false,
    permissionProfile: 'danger-full-access',
    ...environment,
  });
  // Sandboxed attempts wait out a generous early-exit grace (denials must be seen there).
  const sandboxed =
    environment.permissionProfile !== undefined && environment.permissionProfile !== 'danger-full-access';
  const processManager = new UnifiedExecProcessManager({
    processIds: 'deterministic',
    ...(sandboxed ? { earlyExitGraceMs: EARLY_EXIT_GRACE_MS } : {}),
    ...manager,
  });
  closers.push(async () => {
    await processManager.close();
    await env.close();
  });
  return new UnifiedExecTools({ manager: processManager, environments: env, ...tools });
}

/** Answers `initial` questions with `initial`, retries with `retry`; records everything. */
function approverFor(initial: ApprovalDecision, retry: ApprovalDecision = 'denied') {
  const asked: ApprovalRequest[] = [];
  const approver = (request: ApprovalRequest): ApprovalDecision => {
    asked.push(request);
    return request.purpose === 'initial' ? initial : retry;
  };
  return { asked, approver };
}

describe.skipIf(process.platform !== 'linux')('additional permissions (real sandbox)', () => {
  const readOnly = { permissionProfile: 'read-only' } as const;

  test('a granted extra folder is writable for that attempt only', async () => {
    const { asked, approver } = approverFor('approved');
    const tools = session({ approvalPolicy: 'on-request', approver }, readOnly, {
      execPermissionApprovals: true,
    });
    const granted = await tools.execCommand({
      cmd: `echo granted > ${extra}/granted.txt`,
      sandbox_permissions: 'with_additional_permissions',
      additional_permissions: { file_system: { write: [extra] } },
    });
    expect(parseToolText(granted.text)).toMatchObject({ exitCode: 0 });
    expect(await readFile(join(extra, 'granted.txt'), 'utf8')).toBe('granted\n');
    expect(asked).toEqual([
      expect.objectContaining({
        purpose: 'initial',
        additionalPermissions: { file_system: { write: [extra] } },
      }),
    ]);
    // The workspace itself stays read-only under the grant.
    const workspaceWrite = await tools.execCommand({
      cmd: `echo x > ${workspace}/w.txt`,
      sandbox_permissions: 'with_additional_permissions',
      additional_permissions: { file_system: { write: [extra] } },
    });
    expect(parseToolText(workspaceWrite.text).exitCode).not.toBe(0);
    expect(existsSync(join(workspace, 'w.txt'))).toBe(false);
    // Without the grant, the same write is refused by the sandbox (the retry is declined).
    const denied = await tools.execCommand({ cmd: `echo again > ${extra}/again.txt` });
    expect(parseToolText(denied.text).exitCode).not.toBe(0);
    expect(existsSync(join(extra, 'again.txt'))).toBe(false);
  });

  test('a grant approved for the session is not asked again and applies to later requests', async () => {
    const { asked, approver } = approverFor('approved_for_session');
    const tools = session({ approvalPolicy: 'on-request', approver }, readOnly, {
      execPermissionApprovals: true,
    });
    const request = {
      sandbox_permissions: 'with_additional_permissions',
      additional_permissions: { file_system: { write: [extra] } },
    };
    await tools.execCommand({ cmd: `echo one > ${extra}/one.txt`, ...request });
    await tools.execCommand({ cmd: `echo two > ${extra}/two.txt`, ...request });
    expect(await readFile(join(extra, 'two.txt'), 'utf8')).toBe('two\n');
    // Sticky, as the original: a later default request runs with the session's grant too.
    const plain = await tools.execCommand({ cmd: `echo three > ${extra}/three.txt` });
    expect(parseToolText(plain.text)).toMatchObject({ exitCode: 0 });
    expect(await readFile(join(extra, 'three.txt'), 'utf8')).toBe('three\n');
    expect(asked).toHaveLength(1);
  });

  test('inline additional_permissions without sandbox_permissions ask for the grant (normalised)', async () => {
    const { asked, approver } = approverFor('approved');
    const tools = session({ approvalPolicy: 'on-request', approver }, readOnly, {
      execPermissionApprovals: true,
    });
    const result = await tools.execCommand({
      cmd: `echo inline > ${extra}/inline.txt`,
      additional_permissions: { file_system: { write: [extra] } },
    });
    expect(parseToolText(result.text)).toMatchObject({ exitCode: 0 });
    expect(await readFile(join(extra, 'inline.txt'), 'utf8')).toBe('inline\n');
    expect(asked).toEqual([
      expect.objectContaining({ additionalPermissions: { file_system: { write: [extra] } } }),
    ]);
  });

  test('an extra readable path lifts the default credential-store denial for that attempt', async () => {
    // A home of its own: its `.ssh` is a credential store the sandbox hides by default.
    const home = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-home-'));
    const previousHome = process.env.HOME;
    try {
      await mkdir(join(home, '.ssh'));
      await writeFile(join(home, '.ssh', 'id_test'), 'sekrit\n');
      process.env.HOME = home;
      const { asked, approver } = approverFor('approved');
      const tools = session(
        { approvalPolicy: 'on-request', approver },
        { permissionProfile: 'workspace-write' },
        { execPermissionApprovals: true },
      );
      const cmd = `cat ${home}/.ssh/id_test`;
      const hidden = parseToolText((await tools.execCommand({ cmd })).text);
      expect(hidden.exitCode).not.toBe(0);
      expect(hidden.output).not.toContain('sekrit');
      const granted = await tools.execCommand({
        cmd,
        sandbox_permissions: 'with_additional_permissions',
        additional_permissions: { file_system: { read: [`${home}/.ssh`] } },
      });
      expect(parseToolText(granted.text)).toMatchObject({ exitCode: 0, output: 'sekrit\n' });
      // The refusals were offered a retry without the sandbox (declined); the grant was asked once.
      expect(asked.filter((request) => request.purpose === 'initial')).toEqual([
        expect.objectContaining({ additionalPermissions: { file_system: { read: [`${home}/.ssh`] } } }),
      ]);
      // For that attempt only: the next plain attempt is denied again.
      const again = parseToolText((await tools.execCommand({ cmd })).text);
      expect(again.output).not.toContain('sekrit');
    } finally {
      if (previousHome === undefined) delete process.env.HOME;
      else process.env.HOME = previousHome;
      await rm(home, { recursive: true, force: true });
    }
  });

  test('a refused grant never runs the command', async () => {
    const { approver } = approverFor('denied');
    const tools = session({ approvalPolicy: 'on-request', approver }, readOnly, {
      execPermissionApprovals: true,
    });
    const result = await tools.execCommand({
      cmd: `echo no > ${extra}/no.txt`,
      sandbox_permissions: 'with_additional_permissions',
      additional_permissions: { file_system: { write: [extra] } },
    });
    expect(result.text).toContain('Rejected(\\"rejected by user\\")');
    expect(existsSync(join(extra, 'no.txt'))).toBe(false);
  });
});

describe('cancellation', () => {
  test('a cancelled exec_command returns promptly; the stored session stays usable', async () => {
    const tools = session({});
    const controller = new AbortController();
    tools.manager.onEvent((event) => {
      if (event.type === 'begin') controller.abort();
    });
    const result = await tools.execCommand(
      { cmd: 'read line; echo "got $line"', tty: true, yield_time_ms: 30_000 },
      { cancelSignal: controller.signal },
    );
    expect(result.success).toBe(false);
    expect(result.text).toMatch(/^aborted by user after \d+\.\ds$/);
    // Still waiting for its input: stored and reachable.
    expect(tools.manager.listProcesses()).toEqual([
      expect.objectContaining({ processId: 1000, running: true }),
    ]);
    const finished = await tools.writeStdin({ session_id: 1000, chars: 'hi\n', yield_time_ms: 5_000 });
    expect(parseToolText(finished.text).output).toContain('got hi');
  });

  test('a cancelled write_stdin poll returns promptly; the session keeps running', async () => {
    const tools = session({});
    const started = parseToolText(
      (await tools.execCommand({ cmd: 'read line; echo "got $line"', tty: true, yield_time_ms: 250 })).text,
    );
    const controller = new AbortController();
    // An empty poll waits up to its yield time for output that never comes: only the abort ends it.
    const poll = tools.writeStdin(
      { session_id: started.sessionId, chars: '', yield_time_ms: 300_000 },
      { cancelSignal: controller.signal },
    );
    controller.abort();
    expect((await poll).text).toMatch(/^aborted by user after \d+\.\ds$/);
    const finished = await tools.writeStdin({
      session_id: started.sessionId,
      chars: 'yo\n',
      yield_time_ms: 5_000,
    });
    expect(parseToolText(finished.text).output).toContain('got yo');
  });

  test('a cancelled approval question ends the call; nothing runs', async () => {
    let asked = false;
    const tools = session({
      approvalPolicy: 'untrusted',
      // Never answers: only the cancellation can end the call.
      approver: () => {
        asked = true;
        return new Promise<ApprovalDecision>(() => undefined);
      },
    });
    const controller = new AbortController();
    const pending = tools.execCommand(
      { cmd: `touch ${workspace}/never` },
      { cancelSignal: controller.signal },
    );
    await waitFor(() => asked);
    controller.abort();
    expect((await pending).text).toMatch(/^aborted by user after \d+\.\ds$/);
    expect(existsSync(join(workspace, 'never'))).toBe(false);
    expect(tools.manager.size).toBe(0);
  });

  test('an already-aborted signal answers without running anything', async () => {
    const tools = session({});
    const result = await tools.execCommand(
      { cmd: `touch ${workspace}/nope` },
      { cancelSignal: AbortSignal.abort() },
    );
    expect(result).toEqual({ success: false, text: 'aborted by user after 0.1s' });
    expect(existsSync(join(workspace, 'nope'))).toBe(false);
  });
});
