import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolText } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  type ApprovalDecision,
  type ApprovalRequest,
  Environment,
  ExecPolicyManager,
  type LocalEnvironmentOptions,
  UnifiedExecProcessManager,
  type UnifiedExecProcessManagerOptions,
  UnifiedExecTools,
} from '../src/index.ts';

// Outside every workspace-write root (/tmp and $TMPDIR are writable there).
const OUTSIDE_PARENT = '/var/tmp';
// The denial must be seen at the early exit to be retried; generous on a loaded machine.
const EARLY_EXIT_GRACE_MS = 20_000;

let workspace: string;
let outside: string;
let codexHome: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'uexec-policy-'));
  outside = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-policy-outside-'));
  codexHome = await mkdtemp(join(tmpdir(), 'uexec-codex-home-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of [workspace, outside, codexHome]) await rm(dir, { recursive: true, force: true });
});

/** Answers with a script (the last answer repeats) and records every question. */
function scriptedApprover(...answers: ApprovalDecision[]) {
  const asked: ApprovalRequest[] = [];
  const approver = (request: ApprovalRequest): ApprovalDecision => {
    asked.push(request);
    return (answers.length > 1 ? answers.shift() : answers[0]) ?? 'denied';
  };
  return { asked, approver };
}

function session(
  manager: UnifiedExecProcessManagerOptions,
  environment: Partial<LocalEnvironmentOptions> = {},
  tools: { execPermissionApprovals?: boolean } = {},
): UnifiedExecTools {
  const env = Environment.local({
    cwd: workspace,
    shell: '/bin/bash',
    allowLoginShell: false,
    permissionProfile: 'workspace-write',
    ...environment,
  });
  const processManager = new UnifiedExecProcessManager({
    processIds: 'deterministic',
    earlyExitGraceMs: EARLY_EXIT_GRACE_MS,
    ...manager,
  });
  closers.push(async () => {
    await processManager.close();
    await env.close();
  });
  return new UnifiedExecTools({ manager: processManager, environments: env, ...tools });
}

describe.skipIf(process.platform !== 'linux')('exec policy through UnifiedExecTools', () => {
  test('approved for the session: the exact command runs again without asking, the prefix is not kept', async () => {
    const { asked, approver } = scriptedApprover('approved_for_session');
    const tools = session({ approvalPolicy: 'on-request', approver });
    const first = await tools.execCommand({
      cmd: `touch ${outside}/one`,
      sandbox_permissions: 'require_escalated',
      justification: 'write outside the workspace',
      prefix_rule: ['touch'],
    });
    expect(parseToolText(first.text)).toMatchObject({ exitCode: 0 });
    expect(asked).toEqual([
      expect.objectContaining({
        purpose: 'initial',
        reason: 'write outside the workspace',
        proposedExecpolicyAmendment: ['touch'],
      }),
    ]);
    // The same command (another justification): approved for the session, run unsandboxed.
    await rm(join(outside, 'one'));
    const again = await tools.execCommand({
      cmd: `touch ${outside}/one`,
      sandbox_permissions: 'require_escalated',
      justification: 'again',
    });
    expect(parseToolText(again.text)).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(outside, 'one'))).toBe(true);
    expect(asked).toHaveLength(1);
    // Same prefix, other arguments: asked again (as the original, the session keeps the command,
    // not the offered prefix); nothing was written to the rules file.
    await tools.execCommand({
      cmd: `touch ${outside}/two`,
      sandbox_permissions: 'require_escalated',
      justification: 'x',
    });
    expect(asked).toHaveLength(2);
    // The same command on a terminal is another approval.
    await tools.execCommand({
      cmd: `touch ${outside}/one`,
      sandbox_permissions: 'require_escalated',
      justification: 'x',
      tty: true,
    });
    expect(asked).toHaveLength(3);
    expect(existsSync(join(codexHome, 'rules'))).toBe(false);
  });

  test('approved once: runs once, the prefix is not kept', async () => {
    const { asked, approver } = scriptedApprover('approved');
    const tools = session({ approvalPolicy: 'on-request', approver });
    const args = { sandbox_permissions: 'require_escalated', justification: 'x', prefix_rule: ['touch'] };
    await tools.execCommand({ cmd: `touch ${outside}/a`, ...args });
    await tools.execCommand({ cmd: `touch ${outside}/b`, ...args });
    expect(asked).toHaveLength(2);
  });

  test('"always" writes the rules file in the original format and a new session honours it', async () => {
    const { asked, approver } = scriptedApprover('approved_execpolicy_amendment');
    const { manager: execPolicy } = await ExecPolicyManager.load(codexHome);
    const tools = session({ approvalPolicy: 'on-request', approver, execPolicy });
    const result = await tools.execCommand({
      cmd: `touch ${outside}/always`,
      sandbox_permissions: 'require_escalated',
      justification: 'x',
      prefix_rule: ['touch'],
    });
    expect(parseToolText(result.text)).toMatchObject({ exitCode: 0 });
    expect(await readFile(join(codexHome, 'rules', 'default.rules'), 'utf8')).toBe(
      'prefix_rule(pattern=["touch"], decision="allow")\n',
    );
    expect(asked).toHaveLength(1);

    const next = scriptedApprover('denied');
    const reloaded = await ExecPolicyManager.load(codexHome);
    const fresh = session({
      approvalPolicy: 'on-request',
      approver: next.approver,
      execPolicy: reloaded.manager,
    });
    const again = await fresh.execCommand({
      cmd: `touch ${outside}/next-session`,
      sandbox_permissions: 'require_escalated',
      justification: 'x',
    });
    expect(parseToolText(again.text)).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(outside, 'next-session'))).toBe(true);
    expect(next.asked).toEqual([]);
  });

  test('a banned prefix is not offered; the exact command is, as the original derives it', async () => {
    const { asked, approver } = scriptedApprover('denied');
    const tools = session({ approvalPolicy: 'on-request', approver });
    await tools.execCommand({
      cmd: 'python3 -c "print(1)"',
      sandbox_permissions: 'require_escalated',
      justification: 'x',
      prefix_rule: ['python3'],
    });
    expect(asked[0]?.proposedExecpolicyAmendment).toEqual(['python3', '-c', 'print(1)']);
  });

  test('forbidden commands are refused with the original texts, before anything runs', async () => {
    await mkdir(join(codexHome, 'rules'));
    await writeFile(
      join(codexHome, 'rules', 'team.rules'),
      [
        'prefix_rule(pattern=["touch"], decision="forbidden")',
        'prefix_rule(pattern=["git", "push"], decision="forbidden", justification="pushing is not allowed here")',
        'prefix_rule(pattern=["mkdir"], decision="prompt")',
      ].join('\n'),
    );
    const { manager: execPolicy } = await ExecPolicyManager.load(codexHome);
    const { asked, approver } = scriptedApprover('approved');
    const tools = session({ approvalPolicy: 'on-request', approver, execPolicy });
    const touched = await tools.execCommand({ cmd: `touch ${workspace}/x` });
    expect(touched).toEqual({
      success: false,
      text: `exec_command failed: CreateProcess { message: "Rejected(\\"\`/bin/bash -c 'touch ${workspace}/x'\` rejected: policy forbids commands starting with \`touch\`\\")" }`,
    });
    expect(existsSync(join(workspace, 'x'))).toBe(false);
    const pushed = await tools.execCommand({ cmd: 'echo hi && git push origin main' });
    expect(pushed.text).toBe(
      `exec_command failed: CreateProcess { message: "Rejected(\\"\`/bin/bash -c 'echo hi && git push origin main'\` rejected: pushing is not allowed here\\")" }`,
    );
    // A prompt rule asks even for a command the sandbox would allow, with the rule's reason.
    await tools.execCommand({ cmd: 'mkdir made' });
    expect(asked).toEqual([
      expect.objectContaining({ reason: "`/bin/bash -c 'mkdir made'` requires approval by policy" }),
    ]);
    expect(existsSync(join(workspace, 'made'))).toBe(true);
  });

  test('golden: the refusals Codex 0.169.0 answered with the same rules file (never)', async () => {
    const golden = JSON.parse(
      await readFile(join(import.meta.dirname, 'fixtures/exec-policy-rules-never.json'), 'utf8'),
    ) as { rules: string; steps: { arguments: { cmd: string }; output: string }[] };
    await mkdir(join(codexHome, 'rules'));
    await writeFile(join(codexHome, 'rules', 'default.rules'), golden.rules);
    const { manager: execPolicy } = await ExecPolicyManager.load(codexHome);
    // Login shells as in the recording (`/bin/bash -lc`); refused commands never start a shell.
    const tools = session({ approvalPolicy: 'never', execPolicy }, { allowLoginShell: true });
    const refusals = golden.steps.filter((step) => step.output.startsWith('exec_command failed'));
    expect(refusals).toHaveLength(5);
    for (const step of refusals) {
      expect(await tools.execCommand(step.arguments)).toEqual({ success: false, text: step.output });
    }
    // Without rules: the forced-rm heuristic, directly and inside a command substitution.
    const heuristics = JSON.parse(
      await readFile(join(import.meta.dirname, 'fixtures/exec-policy-heuristics-never.json'), 'utf8'),
    ) as { steps: { arguments: { cmd: string }; output: string }[] };
    const bare = session({ approvalPolicy: 'never' }, { allowLoginShell: true });
    expect(heuristics.steps).toHaveLength(2);
    for (const step of heuristics.steps) {
      expect(await bare.execCommand(step.arguments)).toEqual({ success: false, text: step.output });
    }
  });

  test('never: a forced rm is refused with the text Codex 0.169.0 sends; a prompt rule cannot ask', async () => {
    await mkdir(join(codexHome, 'rules'));
    await writeFile(
      join(codexHome, 'rules', 'default.rules'),
      'prefix_rule(pattern=["mkdir"], decision="prompt")\n',
    );
    const { manager: execPolicy } = await ExecPolicyManager.load(codexHome);
    const tools = session({ approvalPolicy: 'never', execPolicy });
    const rm = await tools.execCommand({ cmd: 'echo $(rm -rf /tmp/zz)' });
    expect(rm.text).toBe(
      `exec_command failed: CreateProcess { message: "Rejected(\\"\`/bin/bash -c 'echo $(rm -rf /tmp/zz)'\` rejected: rm -f style commands are not permitted. Use a safer approach\\")" }`,
    );
    const mkdirResult = await tools.execCommand({ cmd: 'mkdir d' });
    expect(mkdirResult.text).toBe(
      'exec_command failed: CreateProcess { message: "Rejected(\\"approval required by policy, but AskForApproval is set to Never\\")" }',
    );
    expect(parseToolText((await tools.execCommand({ cmd: 'echo fine' })).text)).toMatchObject({
      output: 'fine\n',
    });
  });

  test('untrusted: known-safe commands run without asking, anything else is asked', async () => {
    const { asked, approver } = scriptedApprover('approved');
    const tools = session({ approvalPolicy: 'untrusted', approver });
    const safe = await tools.execCommand({ cmd: "echo safe && ls | wc -l && sed -n '1p' /dev/null" });
    expect(parseToolText(safe.text)).toMatchObject({ exitCode: 0 });
    expect(asked).toEqual([]);
    for (const cmd of ["ec''ho tricky", 'echo $(whoami)', 'ls > listing.txt', '(ls)', 'git status']) {
      await tools.execCommand({ cmd });
    }
    expect(asked.map((request) => request.command[2])).toEqual([
      "ec''ho tricky",
      'echo $(whoami)',
      'ls > listing.txt',
      '(ls)',
      'git status',
    ]);
    // The derived prefix of an unmatched prompt is the whole simple command.
    expect(asked[4]?.proposedExecpolicyAmendment).toEqual(['git', 'status']);
    expect(asked[1]?.proposedExecpolicyAmendment).toEqual(['/bin/bash', '-c', 'echo $(whoami)']);
  });
});
