import { describe, expect, test } from 'vitest';
import { pathExportsAfterRestore, restoreCommand, SNAPSHOT_STATE_ENV_PREFIX, splitState } from './restore.ts';

describe('splitState', () => {
  test('never cuts a character and reassembles exactly', () => {
    const state = `# Snapshot file\n${'🦀'.repeat(25_000)}é\n`;
    const pieces = splitState(state, 60 * 1024);
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.join('')).toBe(state);
    for (const piece of pieces) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(60 * 1024);
      expect(piece).not.toContain('\uFFFD');
    }
  });

  test('handles tiny limits and the empty state', () => {
    expect(splitState('a🦀b', 3)).toEqual(['a', '🦀', 'b']);
    expect(splitState('', 10)).toEqual([]);
  });
});

describe('restoreCommand', () => {
  const snapshot = {
    shell: 'bash' as const,
    state: '# Snapshot file\nf () { :; }\n',
    env: { A: 'snap', B: 'snap' },
  };

  test('rewrites the flag and script and layers the environment', () => {
    const restored = restoreCommand(snapshot, {
      command: {
        argv: ['wrapper', '/bin/bash', '-lc', 'echo hi', 'arg'],
        cwd: '/tmp',
        env: {
          A: 'prepared',
          C: 'prepared',
          [`${SNAPSHOT_STATE_ENV_PREFIX}9`]: 'forged',
          node_repl_auth_token: 'x',
        },
      },
      shellStart: 1,
      requestEnv: { A: 'request', GONE: 'dropped by the prepared env' },
    });
    expect(restored.argv.slice(0, 3)).toEqual(['wrapper', '/bin/bash', '-pc']);
    expect(restored.argv[4]).toBe('arg');
    const script = restored.argv[3] ?? '';
    expect(script.startsWith('set +o privileged\nif ! eval "unset __CODEX_SHELL_SNAPSHOT_STATE_0\n')).toBe(
      true,
    );
    expect(script.endsWith("then printf 'failed to restore shell snapshot\\n' >&2; fi\necho hi")).toBe(true);
    expect(restored.env).toEqual({
      A: 'prepared', // request overrides win over the snapshot (with the prepared value)
      B: 'snap',
      C: 'prepared',
      [`${SNAPSHOT_STATE_ENV_PREFIX}0`]: snapshot.state,
    });
  });

  test('uses -fc with setopt RCS for zsh and -c for sh', () => {
    const command = { argv: ['/bin/zsh', '-lc', 'true'], cwd: '/', env: {} };
    const zsh = restoreCommand({ ...snapshot, shell: 'zsh' }, { command, shellStart: 0, requestEnv: {} });
    expect(zsh.argv[1]).toBe('-fc');
    expect(zsh.argv[2]?.startsWith('setopt RCS\nif ! eval')).toBe(true);
    const sh = restoreCommand({ ...snapshot, shell: 'sh' }, { command, shellStart: 0, requestEnv: {} });
    expect(sh.argv[1]).toBe('-c');
    expect(sh.argv[2]?.startsWith('if ! eval')).toBe(true);
  });

  test('pathExportsAfterRestore prepends and quotes', () => {
    expect(pathExportsAfterRestore([])).toBe('');
    expect(pathExportsAfterRestore(['/a b', "/it's"])).toBe(
      `PATH='/a b:/it'\\''s'"\${PATH:+:$PATH}"; export PATH\n`,
    );
  });
});
