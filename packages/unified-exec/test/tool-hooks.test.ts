// The PreToolUse / PostToolUse hooks around exec_command, write_stdin and the apply_patch tool,
// with the payloads and texts Codex 0.169.0 uses.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolText } from '@execd/test-kit';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  Environment,
  type PostToolUsePayload,
  type PreToolUsePayload,
  type ToolHooks,
  UnifiedExecProcessManager,
  UnifiedExecTools,
} from '../src/index.ts';

let workspace: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'uexec-hooks-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await rm(workspace, { recursive: true, force: true });
});

// The signature of the permission tests' helper; only the tools' hooks are used here.
function session(
  _manager: object,
  _environment: object,
  tools: { hooks?: ToolHooks } = {},
): UnifiedExecTools {
  const env = Environment.local({
    cwd: workspace,
    shell: '/bin/bash',
    allowLoginShell: false,
    permissionProfile: 'danger-full-access',
  });
  const manager = new UnifiedExecProcessManager({ processIds: 'deterministic' });
  closers.push(async () => {
    await manager.close();
    await env.close();
  });
  return new UnifiedExecTools({ manager, environments: env, ...tools });
}

describe('hooks', () => {
  function recordingHooks() {
    const pre: PreToolUsePayload[] = [];
    const post: PostToolUsePayload[] = [];
    return {
      pre,
      post,
      hooks: {
        preToolUse: (p: PreToolUsePayload) => void pre.push(p),
        postToolUse: (p: PostToolUsePayload) => void post.push(p),
      },
    };
  }

  test('pre gets the raw command; post gets the output of a one-shot command', async () => {
    const { pre, post, hooks } = recordingHooks();
    const tools = session({}, {}, { hooks });
    await tools.execCommand({ cmd: 'echo hooked' }, { callId: 'call-1' });
    expect(pre).toEqual([
      { tool_name: 'Bash', tool_use_id: 'call-1', tool_input: { command: 'echo hooked' } },
    ]);
    expect(post).toEqual([
      {
        tool_name: 'Bash',
        tool_use_id: 'call-1',
        tool_input: { command: 'echo hooked' },
        tool_response: 'hooked\n',
      },
    ]);
  });

  test('running sessions get no post hook; write_stdin completion reports the original call, per session', async () => {
    const { pre, post, hooks } = recordingHooks();
    const tools = session({}, {}, { hooks });
    const start = (cmd: string, callId: string) =>
      tools.execCommand({ cmd, tty: true, yield_time_ms: 250 }, { callId });
    const a = parseToolText((await start('read x; echo "A:$x"', 'call-a')).text);
    const b = parseToolText((await start('read y; echo "B:$y"', 'call-b')).text);
    expect(post).toEqual([]);
    await tools.writeStdin({ session_id: b.sessionId, chars: 'bee\n', yield_time_ms: 5_000 });
    await tools.writeStdin({ session_id: a.sessionId, chars: 'ay\n', yield_time_ms: 5_000 });
    expect(pre.map((payload) => payload.tool_use_id)).toEqual(['call-a', 'call-b']);
    expect(post.map(({ tool_use_id, tool_input }) => [tool_use_id, tool_input.command])).toEqual([
      ['call-b', 'read y; echo "B:$y"'],
      ['call-a', 'read x; echo "A:$x"'],
    ]);
    expect(post[0]?.tool_response).toContain('B:bee');
    expect(post[1]?.tool_response).toContain('A:ay');
  });

  test('a blocking PreToolUse hook stops the call: the model gets the original text, nothing runs', async () => {
    const post: PostToolUsePayload[] = [];
    const tools = session(
      {},
      {},
      {
        hooks: {
          preToolUse: (payload: PreToolUsePayload) =>
            payload.tool_input.command.includes('blocked')
              ? { decision: 'block', reason: 'no writes here' }
              : undefined,
          postToolUse: (payload: PostToolUsePayload) => void post.push(payload),
        },
      },
    );
    const result = await tools.execCommand({ cmd: 'touch blocked.txt' }, { callId: 'call-b' });
    expect(result).toEqual({
      success: false,
      text: 'Command blocked by PreToolUse hook: no writes here. Command: touch blocked.txt',
    });
    expect(existsSync(join(workspace, 'blocked.txt'))).toBe(false);
    expect(post).toEqual([]);
    // A blank reason does not block (as the original); other commands run.
    const blank = session({}, {}, { hooks: { preToolUse: () => ({ decision: 'block', reason: ' ' }) } });
    expect(parseToolText((await blank.execCommand({ cmd: 'echo ran' })).text).output).toBe('ran\n');
    expect(parseToolText((await tools.execCommand({ cmd: 'echo fine' })).text).output).toBe('fine\n');
  });

  // Recorded from Codex 0.169.0 (hooks.json with a PreToolUse/PostToolUse command hook).
  test('the apply_patch tool is hooked as `apply_patch`; a patch through exec_command as Bash only', async () => {
    const pre: PreToolUsePayload[] = [];
    const post: PostToolUsePayload[] = [];
    const tools = session(
      {},
      {},
      {
        hooks: {
          preToolUse: (payload: PreToolUsePayload) => {
            pre.push(payload);
            return payload.tool_input.command.includes('deny-me')
              ? { decision: 'block', reason: 'no way' }
              : undefined;
          },
          postToolUse: (payload: PostToolUsePayload) => void post.push(payload),
        },
      },
    );
    const patch = (file: string) => `*** Begin Patch\n*** Add File: ${file}\n+x\n*** End Patch`;
    const ok = await tools.applyPatch(patch('ok.txt'), { callId: 'call-0' });
    expect(ok.text.replace(/^Wall time: [\d.]+ seconds$/m, 'Wall time: <WALL> seconds')).toBe(
      'Exit code: 0\nWall time: <WALL> seconds\nOutput:\nSuccess. Updated the following files:\nA ok.txt\n',
    );
    const denied = await tools.applyPatch(patch('deny-me.txt'), { callId: 'call-1' });
    expect(denied).toEqual({
      success: false,
      text: `Command blocked by PreToolUse hook: no way. Command: ${patch('deny-me.txt')}`,
    });
    expect(existsSync(join(workspace, 'deny-me.txt'))).toBe(false);
    const heredoc = `apply_patch <<'EOF'\n${patch('via-exec.txt')}\nEOF\n`;
    await tools.execCommand({ cmd: heredoc }, { callId: 'call-2' });
    const failing = '*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch';
    expect((await tools.applyPatch(failing, { callId: 'call-3' })).success).toBe(false);
    expect(pre).toEqual([
      { tool_name: 'apply_patch', tool_use_id: 'call-0', tool_input: { command: patch('ok.txt') } },
      { tool_name: 'apply_patch', tool_use_id: 'call-1', tool_input: { command: patch('deny-me.txt') } },
      { tool_name: 'Bash', tool_use_id: 'call-2', tool_input: { command: heredoc } },
      { tool_name: 'apply_patch', tool_use_id: 'call-3', tool_input: { command: failing } },
    ]);
    // Only the applied patch of the tool has a PostToolUse (not the exec_command one, not a failure).
    expect(post).toEqual([
      {
        tool_name: 'apply_patch',
        tool_use_id: 'call-0',
        tool_input: { command: patch('ok.txt') },
        tool_response: ok.text,
      },
    ]);
  });

  test('a throwing hook does not break the call', async () => {
    const tools = session(
      {},
      {},
      {
        hooks: {
          preToolUse: () => {
            throw new Error('hook failed');
          },
        },
      },
    );
    expect(parseToolText((await tools.execCommand({ cmd: 'echo ok' })).text).output).toBe('ok\n');
  });
});
