import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ApprovalRequest,
  Environment,
  ExecPolicyManager,
  UnifiedExecProcessManager,
  UnifiedExecTools,
} from '@execd/unified-exec';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { approvalQuestion, decisionOf, terminalApprover } from './terminal-approver.ts';

const base: ApprovalRequest = {
  callId: 'c',
  processId: 1000,
  command: ['/bin/bash', '-lc', 'printf hi'],
  cwd: '/w',
  environmentId: 'local',
  purpose: 'initial',
  reason: undefined,
};

describe('the terminal approver offers what the original offers', () => {
  test('"always" keeps the proposed prefix; a network question keeps the host; otherwise there is none', () => {
    const prefixed = { ...base, proposedExecpolicyAmendment: ['printf', 'hi\u001b[2K'] };
    expect(approvalQuestion(prefixed)).toContain(
      "[y]es / [a]lways: don't ask again for commands that start with `printf 'hi\\x1b[2K'` / [N]o? ",
    );
    expect(decisionOf('a', prefixed)).toBe('approved_execpolicy_amendment');
    expect(decisionOf('p', prefixed)).toBe('approved_execpolicy_amendment');
    const network = {
      ...base,
      purpose: 'network' as const,
      network: { host: 'example.test', port: 443, protocol: 'https_connect' },
    };
    expect(approvalQuestion(network)).toContain("[a]lways: don't ask again for this host in this session");
    expect(decisionOf('always', network)).toBe('approved_for_session');
    // No prefix offered (or extra permissions asked for): yes or no only.
    expect(approvalQuestion(base)).toMatch(/\n\[y\]es \/ \[N\]o\? $/);
    expect(decisionOf('a', base)).toBe('denied');
    const permissions = { ...prefixed, additionalPermissions: { network: { enabled: true } } };
    expect(decisionOf('a', permissions)).toBe('denied');
    expect(decisionOf('y', base)).toBe('approved');
    expect(decisionOf('', prefixed)).toBe('denied');
  });
});

describe('"always" through real tools', () => {
  let dir: string;
  let codexHome: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'uexec-always-'));
    codexHome = await mkdtemp(join(tmpdir(), 'uexec-always-home-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(codexHome, { recursive: true, force: true });
  });

  test('answering `a` writes the prefix rule; the same command then runs without a question', async () => {
    const questions: string[] = [];
    const approver = terminalApprover(() => async (question) => {
      questions.push(question);
      return 'a';
    });
    const { manager: execPolicy } = await ExecPolicyManager.load(codexHome);
    await using environment = Environment.local({
      cwd: dir,
      shell: '/bin/bash',
      allowLoginShell: false,
      permissionProfile: 'danger-full-access',
    });
    await using manager = new UnifiedExecProcessManager({
      approvalPolicy: 'untrusted',
      approver,
      execPolicy,
    });
    const tools = new UnifiedExecTools({ manager, environments: environment });
    const first = await tools.execCommand({ cmd: 'printf hi' });
    expect(first.text).toContain('Output:\nhi');
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain("[a]lways: don't ask again for commands that start with `printf hi`");
    expect(await readFile(join(codexHome, 'rules', 'default.rules'), 'utf8')).toBe(
      'prefix_rule(pattern=["printf", "hi"], decision="allow")\n',
    );
    expect((await tools.execCommand({ cmd: 'printf hi' })).text).toContain('Output:\nhi');
    expect(questions).toHaveLength(1);
  });
});
