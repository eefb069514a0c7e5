import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolText } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { Environment, UnifiedExecProcessManager, UnifiedExecTools } from '../src/index.ts';
import { buildCommandEnv } from '../src/runtime/command-env.ts';
import { execServerParams } from '../src/runtime/launch.ts';

const NAMES = [
  'CODEX_TOOL_CALL_ID',
  'CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS',
  'CODEX_SANDBOX_NETWORK_DISABLED',
  'CODEX_PERMISSION_PROFILE',
];
const PRINT = NAMES.map((name) => `printf '%s=[%s]\\n' ${name} "$${name}"`).join('; ');

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'uexec-env-'));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

async function printedEnv(
  profile: 'danger-full-access' | 'workspace-write',
  manager: { permissionProfileName?: string; applyPatchPreserveLineEndings?: boolean } = {},
): Promise<string> {
  await using environment = Environment.local({
    cwd: workspace,
    shell: '/bin/bash',
    allowLoginShell: false,
    permissionProfile: profile,
  });
  await using processes = new UnifiedExecProcessManager({ processIds: 'deterministic', ...manager });
  const tools = new UnifiedExecTools({ manager: processes, environments: environment });
  return parseToolText((await tools.execCommand({ cmd: PRINT }, { callId: 'call-env-1' })).text).output;
}

describe('runtime variables of a command (as Codex 0.169.0 sends them)', () => {
  test('tool call id and apply-patch line endings always; no network flag at full access', async () => {
    expect(await printedEnv('danger-full-access')).toBe(
      'CODEX_TOOL_CALL_ID=[call-env-1]\nCODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=[1]\n' +
        'CODEX_SANDBOX_NETWORK_DISABLED=[]\nCODEX_PERMISSION_PROFILE=[]\n',
    );
  });

  test.skipIf(process.platform !== 'linux')(
    'a sandbox without network sets CODEX_SANDBOX_NETWORK_DISABLED; a named profile is exported',
    async () => {
      expect(
        await printedEnv('workspace-write', {
          permissionProfileName: ':workspace',
          applyPatchPreserveLineEndings: false,
        }),
      ).toBe(
        'CODEX_TOOL_CALL_ID=[call-env-1]\nCODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=[]\n' +
          'CODEX_SANDBOX_NETWORK_DISABLED=[1]\nCODEX_PERMISSION_PROFILE=[:workspace]\n',
      );
    },
  );

  test('an exec-server gets runtime variables only through the overlay, and the policy excludes them', () => {
    const { execServerPolicy, execServerOverlay } = buildCommandEnv(
      { inherit: 'all', ignoreDefaultExcludes: true, exclude: [], set: {}, includeOnly: [] },
      { baseEnv: { CODEX_VERSION: 'forged' }, toolCallId: 'call-1', applyPatchPreserveLineEndings: true },
    );
    expect(execServerPolicy.exclude).toEqual([
      'CODEX_PERMISSION_PROFILE',
      'CODEX_VERSION',
      'CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS',
      'CODEX_PLUGIN_METRICS_OUTPUT',
    ]);
    expect(execServerOverlay).toMatchObject({
      CODEX_TOOL_CALL_ID: 'call-1',
      CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS: '1',
    });
  });

  test('runtime PATH folders are re-exported after a snapshot restore, and only then', async () => {
    await using environment = Environment.local({ cwd: workspace, shell: '/bin/bash' });
    const env = buildCommandEnv(environment.settings.envPolicy, {});
    const base = {
      processId: 1000,
      command: ['/bin/bash', '-lc', 'echo "$PATH"'],
      cwd: workspace,
      tty: false,
      env,
      environment,
      earlyExitGraceMs: 150,
      pathPrepends: ['/opt/codex path/bin', "/it's"],
    };
    const restored = execServerParams(
      { ...base, shellSnapshot: { scopeId: 'scope', shell: { name: 'bash', path: '/bin/bash' } } },
      undefined,
      false,
    );
    expect(restored.argv[2]).toBe(
      `PATH='/opt/codex path/bin:/it'\\''s'"\${PATH:+:$PATH}"; export PATH\necho "$PATH"`,
    );
    expect(execServerParams({ ...base, shellSnapshot: undefined }, undefined, false).argv).toEqual(
      base.command,
    );
  });
});
