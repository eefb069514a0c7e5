import { describe, expect, test } from 'vitest';
import {
  APPLY_PATCH_LARK_GRAMMAR,
  APPLY_PATCH_LARK_GRAMMAR_ENVIRONMENTS,
  applyPatchFreeformToolSpec,
} from './apply-patch-spec.ts';
import { parseExecCommandArgs } from './exec-command-args.ts';
import { escalationRejectedMessage, validateExecCommandPolicy } from './exec-command-policy.ts';
import { applyUnifiedExecEnv, unifiedExecEnv } from './exec-env.ts';
import { formatRustFloat, rustDebugString } from './rust-format.ts';
import { Shell } from './shell.ts';
import { toAnthropicTool, toMcpTool, toOpenAiFunctionTool } from './tool-exporters.ts';
import { execCommandToolSpec, writeStdinToolSpec } from './tool-specs.ts';
import { parseWriteStdinArgs } from './write-stdin-args.ts';
import { clampExecYieldTime, clampWriteStdinYieldTime } from './yield-time.ts';

describe('tool specs (shell_spec_tests)', () => {
  test('exec_command_tool_matches_expected_spec', () => {
    const spec = execCommandToolSpec();
    expect(spec.name).toBe('exec_command');
    expect(spec.strict).toBe(false);
    expect(Object.keys(spec.parameters.properties ?? {})).toEqual([
      'cmd',
      'justification',
      'login',
      'max_output_tokens',
      'prefix_rule',
      'sandbox_permissions',
      'shell',
      'tty',
      'workdir',
      'yield_time_ms',
    ]);
    expect(spec.parameters.required).toEqual(['cmd']);
    expect(spec.outputSchema.required).toEqual(['wall_time_seconds', 'output']);
    expect(Object.keys(spec.outputSchema.properties ?? {})).toEqual([
      'chunk_id',
      'wall_time_seconds',
      'exit_code',
      'session_id',
      'original_token_count',
      'output',
    ]);
  });

  test('exec_command_tool_can_hide_shell_parameter and login; can add environment_id', () => {
    const props = execCommandToolSpec({
      includeShellParameter: false,
      allowLoginShell: false,
      includeEnvironmentId: true,
    }).parameters.properties;
    expect(props).not.toHaveProperty('shell');
    expect(props).not.toHaveProperty('login');
    expect(props?.environment_id).toEqual({
      type: 'string',
      description: 'Environment id from <environment_context>. Omit to use the primary environment.',
    });
  });

  test('write_stdin_tool_matches_expected_spec', () => {
    const spec = writeStdinToolSpec();
    expect(Object.keys(spec.parameters.properties ?? {})).toEqual([
      'chars',
      'max_output_tokens',
      'session_id',
      'yield_time_ms',
    ]);
    expect(spec.parameters.required).toEqual(['session_id']);
  });

  test('exporters for OpenAI, Anthropic and MCP', () => {
    const spec = writeStdinToolSpec();
    expect(toOpenAiFunctionTool(spec)).toEqual({
      type: 'function',
      name: 'write_stdin',
      description: spec.description,
      strict: false,
      parameters: spec.parameters,
    });
    expect(toAnthropicTool(spec)).toEqual({
      name: 'write_stdin',
      description: spec.description,
      input_schema: spec.parameters,
    });
    const mcp = toMcpTool(spec);
    expect(mcp).toEqual({ name: 'write_stdin', description: spec.description, inputSchema: spec.parameters });
    mcp.inputSchema.required?.push('chars');
    expect(spec.parameters.required).toEqual(['session_id']);
  });
});

describe('argument parsing', () => {
  test('exec_command defaults', () => {
    expect(parseExecCommandArgs('{"cmd":"ls"}')).toEqual({
      ok: true,
      args: { cmd: 'ls', tty: false, yield_time_ms: 10_000, sandbox_permissions: 'use_default' },
    });
    expect(parseExecCommandArgs({ cmd: 'ls', max_output_tokens: 5, tty: true })).toMatchObject({
      ok: true,
      args: { max_output_tokens: 5, tty: true },
    });
  });

  test('write_stdin defaults', () => {
    expect(parseWriteStdinArgs({ session_id: 1000 })).toEqual({
      ok: true,
      args: { session_id: 1000, chars: '', yield_time_ms: 250 },
    });
  });

  test('environment ids are checked before the other fields', () => {
    expect(
      parseExecCommandArgs({ cmd: 'ls', environment_id: 'x', tty: 'bad' }, { environmentIds: ['a'] }),
    ).toEqual({
      ok: false,
      message: 'unknown turn environment id `x`',
    });
    expect(parseExecCommandArgs({ cmd: 'ls', environment_id: 'a' }, { environmentIds: ['a'] }).ok).toBe(true);
  });

  test('policy checks', () => {
    const args = { cmd: 'ls', tty: false, yield_time_ms: 1, sandbox_permissions: 'use_default' } as const;
    expect(
      validateExecCommandPolicy(
        { ...args, sandbox_permissions: 'require_escalated' },
        { approvalPolicy: 'on-request' },
      ),
    ).toBe(undefined);
    expect(
      validateExecCommandPolicy(
        { ...args, sandbox_permissions: 'require_escalated' },
        { approvalPolicy: 'untrusted' },
      ),
    ).toBe(escalationRejectedMessage('untrusted'));
    expect(escalationRejectedMessage('on-failure')).toContain('approval policy is OnFailure;');
    expect(
      validateExecCommandPolicy(
        { ...args, sandbox_permissions: 'with_additional_permissions' },
        { execPermissionApprovals: true },
      ),
    ).toMatch(/^missing `additional_permissions`/);
    expect(
      validateExecCommandPolicy(
        {
          ...args,
          sandbox_permissions: 'with_additional_permissions',
          additional_permissions: { network: { enabled: true } },
        },
        { execPermissionApprovals: true },
      ),
    ).toBe(undefined);
    expect(
      validateExecCommandPolicy({ ...args, additional_permissions: { network: { enabled: true } } }, {}),
    ).toMatch(/^additional permissions are disabled/);
  });

  test('Rust-style value rendering', () => {
    expect(formatRustFloat(2)).toBe('2.0');
    expect(formatRustFloat(1e16)).toBe('1e+16');
    expect(formatRustFloat(1e15)).toBe('1000000000000000.0');
    expect(formatRustFloat(-0)).toBe('-0.0');
    expect(rustDebugString('a"b\\\n\u0001é')).toBe('"a\\"b\\\\\\n\\u{1}é"');
  });
});

describe('yield clamps (§4.2)', () => {
  test('exec_command: clamp(y, 250, 30000); no floor off Windows', () => {
    expect(clampExecYieldTime(1000, { windows: false })).toBe(1000);
    expect(clampExecYieldTime(1, { windows: false })).toBe(250);
    expect(clampExecYieldTime(99_999, { windows: false })).toBe(30_000);
    expect(clampExecYieldTime(1000, { windows: true })).toBe(10_000);
  });

  test('write_stdin: empty polls 5000..max, writes 250..30000', () => {
    expect(clampWriteStdinYieldTime(250, '')).toBe(5000);
    expect(clampWriteStdinYieldTime(100_000, '')).toBe(100_000);
    expect(clampWriteStdinYieldTime(900_000, '')).toBe(300_000);
    expect(clampWriteStdinYieldTime(900_000, '', 1000)).toBe(5000);
    expect(clampWriteStdinYieldTime(1, 'x')).toBe(250);
    expect(clampWriteStdinYieldTime(60_000, 'x')).toBe(30_000);
  });
});

describe('environment and shell', () => {
  test('unified_exec_env_injects_defaults', () => {
    expect(unifiedExecEnv()).toEqual({
      NO_COLOR: '1',
      TERM: 'dumb',
      LANG: 'C.UTF-8',
      LC_CTYPE: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      COLORTERM: '',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GH_PAGER: 'cat',
      CODEX_CI: '1',
    });
    expect(unifiedExecEnv({ threadId: 't', sessionId: 's', networkRestricted: true })).toMatchObject({
      CODEX_THREAD_ID: 't',
      CODEX_SESSION_ID: 's',
      CODEX_SANDBOX_NETWORK_DISABLED: '1',
    });
  });

  test('unified_exec_env_overrides_existing_values', () => {
    expect(applyUnifiedExecEnv({ TERM: 'xterm-256color', HOME: '/root' })).toMatchObject({
      TERM: 'dumb',
      HOME: '/root',
    });
  });

  test('deriveExecArgs for each shell family', () => {
    expect(Shell.fromPath('/bin/bash').deriveExecArgs('echo hi', true)).toEqual([
      '/bin/bash',
      '-lc',
      'echo hi',
    ]);
    expect(Shell.fromPath('/usr/bin/zsh').deriveExecArgs('echo hi', false)).toEqual([
      '/usr/bin/zsh',
      '-c',
      'echo hi',
    ]);
    expect(Shell.fromPath('pwsh.exe').deriveExecArgs('dir', false)).toEqual([
      'pwsh.exe',
      '-NoProfile',
      '-Command',
      'dir',
    ]);
    expect(Shell.fromPath('powershell').deriveExecArgs('dir', true)).toEqual([
      'powershell',
      '-Command',
      'dir',
    ]);
    expect(Shell.fromPath('C:\\Windows\\cmd.exe').deriveExecArgs('dir', true)).toEqual([
      'C:\\Windows\\cmd.exe',
      '/c',
      'dir',
    ]);
  });
});

test('apply_patch with several environments: the grammar allows one `*** Environment ID:` line first', () => {
  const spec = applyPatchFreeformToolSpec({ multipleEnvironments: true });
  expect(spec.format.definition).toBe(APPLY_PATCH_LARK_GRAMMAR_ENVIRONMENTS);
  expect(spec.format.definition.split('\n').slice(0, 3)).toEqual([
    'start: begin_patch environment_id? hunk+ end_patch',
    'environment_id: "*** Environment ID: " filename LF',
    'begin_patch: "*** Begin Patch" LF',
  ]);
  expect(applyPatchFreeformToolSpec().format.definition).toBe(APPLY_PATCH_LARK_GRAMMAR);
});
