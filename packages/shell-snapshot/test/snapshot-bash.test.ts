// Ports of exec_process.rs `shell_snapshot_v2_filters_profile_exports_and_stays_in_memory`
// (local_pipe, local_tty, local_bash_env) at this package's level: the restored command is run
// with node:child_process, or in a real PTY.
import { createEnv } from '@execd/pty-utils';
import { describe, expect, test } from 'vitest';
import {
  type LaunchCommand,
  pathExportsAfterRestore,
  ShellSnapshotCache,
  SNAPSHOT_STATE_ENV_PREFIX,
} from '../src/index.ts';
import {
  commandOf,
  launch,
  runPipe,
  runTty,
  systemLoginPath,
  type TempHome,
  tempHome,
} from './helpers/index.ts';

const PADDING_CRABS = 21_000; // 84 000 bytes of state: two 60 KiB chunks at least

const PROFILE = [
  'printf x >> "$HOME/captures"',
  'export PATH="$HOME/profile-bin:$PATH"',
  'export PROFILE_ALLOWED=profile PROFILE_SECRET_TOKEN=secret PROFILE_DENIED=denied',
  'profile_helper() { printf helper; }',
  // Shadowing functions must not break the capture or the restore.
  "unset() { printf 'shadowed unset\\n'; }",
  "builtin() { printf 'shadowed builtin\\n'; }",
  `profile_padding() { printf '%s' '${'🦀'.repeat(PADDING_CRABS)}'; }`,
  '',
].join('\n');

const POLICY = {
  inherit: 'all' as const,
  ignoreDefaultExcludes: false,
  exclude: ['PROFILE_DENIED'],
  set: {},
  includeOnly: ['BASH_ENV', 'ENV', 'HOME', 'PATH', 'PROFILE_*'],
};

const COMMAND = [
  `printf '%s|%s|%s|%s|%s|%s|%s|%s' "$(profile_helper)" "$PROFILE_ALLOWED" "\${PROFILE_SECRET_TOKEN-missing}"`,
  `"\${PROFILE_DENIED-missing}" "$PATH" "\${${SNAPSHOT_STATE_ENV_PREFIX}0-missing}"`,
  `"\${${SNAPSHOT_STATE_ENV_PREFIX}1-missing}" "$(profile_padding | wc -c)"`,
].join(' ');

function stateVars(command: LaunchCommand): string[] {
  return Object.keys(command.env).filter((name) => name.startsWith(SNAPSHOT_STATE_ENV_PREFIX));
}

async function runTwice(home: TempHome, run: typeof runPipe, baseEnv: Record<string, string> = {}) {
  await using cache = new ShellSnapshotCache({ createEnv });
  const runtime = '/opt/runtime-bin';
  const script = pathExportsAfterRestore([runtime]) + COMMAND;
  const outputs = [];
  for (let round = 0; round < 2; round++) {
    const prepared = await cache.prepare(launch({ home, script, envPolicy: POLICY, baseEnv }));
    expect(prepared.status).toBe('restored');
    if (prepared.status !== 'restored') throw new Error('not restored');
    expect(prepared.command.argv.slice(0, 2)).toEqual(['/bin/bash', '-pc']);
    expect(stateVars(prepared.command).length).toBeGreaterThanOrEqual(2);
    outputs.push(await run(prepared.command));
  }
  return { outputs, runtime };
}

describe.each([
  ['pipe', runPipe],
  ['tty', runTty],
])('bash snapshot over a %s', (_mode, run) => {
  test('restores functions and filtered exports, runs the profile once, stays in memory', async () => {
    using home = tempHome({ '.bashrc': PROFILE });
    const { outputs, runtime } = await runTwice(home, run);
    const expected = [
      'helper',
      'profile',
      'missing', // *TOKEN* is a default exclude
      'missing', // excluded by the policy
      `${runtime}:${home.path}/profile-bin:${systemLoginPath('bash')}`,
      'missing', // the state variables are unset before the command runs
      'missing',
      String(PADDING_CRABS * 4),
    ].join('|');
    for (const output of outputs) {
      expect(output).toEqual({ stdout: expected, stderr: '', exitCode: 0 });
    }
    expect(home.captures()).toBe('x');
    expect(home.listing()).toEqual(['.bashrc', 'captures']);
  });
});

test('a profile loaded through BASH_ENV is captured once and not re-run by the restore', async () => {
  using home = tempHome({ 'profile.sh': PROFILE });
  const { outputs, runtime } = await runTwice(home, runPipe, { BASH_ENV: `${home.path}/profile.sh` });
  for (const output of outputs) {
    expect(output.stderr).toBe('');
    expect(
      output.stdout.startsWith(`helper|profile|missing|missing|${runtime}:${home.path}/profile-bin:`),
    ).toBe(true);
  }
  expect(home.captures()).toBe('x');
});

test('request env overrides win over the profile; the state never reaches child processes', async () => {
  using home = tempHome({ '.bashrc': 'export PROFILE_ALLOWED=profile OTHER=profile\n' });
  await using cache = new ShellSnapshotCache({ createEnv });
  const script =
    'printf "%s|%s|" "$PROFILE_ALLOWED" "$OTHER"; env | grep -c "^__CODEX_SHELL_SNAPSHOT" || true';
  const prepared = await cache.prepare(launch({ home, script, env: { PROFILE_ALLOWED: 'request' } }));
  expect(prepared.status).toBe('restored');
  expect(await runPipe(commandOf(prepared))).toEqual({
    stdout: 'request|profile|0\n',
    stderr: '',
    exitCode: 0,
  });
});

test('dangerous options and traps from the profile are not restored; safe options are', async () => {
  using home = tempHome({
    '.bashrc': [
      "trap 'echo TRAPPED-EXIT' EXIT",
      "trap 'echo TRAPPED-ERR' ERR",
      'set -o errexit -o nounset -o xtrace -o verbose -o noclobber -o pipefail',
      '',
    ].join('\n'),
  });
  await using cache = new ShellSnapshotCache({ createEnv });
  const script = `false; printf "%s|%s" "$-" "\${UNSET_VARIABLE-unset}"; set -o | grep -E "^pipefail" | tr -s " \\t" ":"`;
  const prepared = await cache.prepare(launch({ home, script }));
  expect(prepared.status).toBe('restored');
  const output = await runPipe(commandOf(prepared));
  expect(output.stderr).toBe('');
  expect(output.exitCode).toBe(0);
  const [flags, rest] = output.stdout.split('|');
  expect(flags).toContain('C'); // noclobber
  expect(flags).not.toMatch(/[euxv]/);
  expect(rest).toBe('unsetpipefail:on\n');
  expect(output.stdout).not.toContain('TRAPPED');
});
