// sh (dash) and zsh snapshots, and the spec §8.10 `zsh_snapshot_restores_tied_path`.

import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createEnv } from '@execd/pty-utils';
import { expect, test } from 'vitest';
import { ShellSnapshotCache } from '../src/index.ts';
import { commandOf, launch, runPipe, runTty, tempHome } from './helpers/index.ts';

const POLICY = {
  inherit: 'all' as const,
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
};

test.each([
  ['pipe', runPipe],
  ['tty', runTty],
])('sh over a %s: exports filtered, options and aliases restored, profile once', async (_mode, run) => {
  using home = tempHome({
    '.profile': [
      'printf x >> "$HOME/captures"',
      'export PROFILE_ALLOWED=profile PROFILE_SECRET_TOKEN=secret',
      "alias greet='printf hello'",
      'set -o noglob',
      '',
    ].join('\n'),
  });
  await using cache = new ShellSnapshotCache({ createEnv });
  const script = [
    'greet',
    `printf '|%s|%s|%s|' "$PROFILE_ALLOWED" "\${PROFILE_SECRET_TOKEN-missing}" "\${__CODEX_SHELL_SNAPSHOT_STATE_0-missing}"`,
    'case $- in *f*) printf noglob ;; *) printf glob ;; esac',
  ].join('\n');
  for (let round = 0; round < 2; round++) {
    const prepared = await cache.prepare(launch({ home, script, shell: 'sh', envPolicy: POLICY }));
    expect(prepared.status).toBe('restored');
    const command = commandOf(prepared);
    expect(command.argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(await run(command)).toEqual({
      stdout: 'hello|profile|missing|missing|noglob',
      stderr: '',
      exitCode: 0,
    });
  }
  expect(home.captures()).toBe('x');
});

test('zsh: tied PATH/path, functions and options restored; trap functions are not', async () => {
  using home = tempHome({
    '.zshrc': [
      'printf x >> "$HOME/captures"',
      'path=("$HOME/zbin" $path)',
      'export PROFILE_Z=zed',
      'zfn() { print -n zfn; }',
      'setopt extendedglob',
      "alias zz='print -n aliased'",
      'TRAPEXIT() { print TRAPPED; }',
      'zshexit() { print ZSHEXIT; }',
      '',
    ].join('\n'),
  });
  mkdirSync(join(home.path, 'zbin'));
  home.write('zbin/mytool', '#!/bin/sh\nprintf tool\n');
  chmodSync(join(home.path, 'zbin/mytool'), 0o755);
  await using cache = new ShellSnapshotCache({ createEnv });
  const script = `print -rn -- "$path[1]|\${PATH%%:*}|$(mytool)|$(zfn)|$options[extendedglob]|$PROFILE_Z|$+aliases[zz]"`;
  for (let round = 0; round < 2; round++) {
    const prepared = await cache.prepare(launch({ home, script, shell: 'zsh' }));
    expect(prepared.status).toBe('restored');
    const command = commandOf(prepared);
    expect(command.argv.slice(0, 2)).toEqual(['/bin/zsh', '-fc']);
    const zbin = `${home.path}/zbin`;
    expect(await runPipe(command)).toEqual({
      stdout: `${zbin}|${zbin}|tool|zfn|on|zed|1`,
      stderr: '',
      exitCode: 0,
    });
  }
  expect(home.captures()).toBe('x');
});

test('snapshots are keyed by shell: a zsh snapshot never reaches bash', async () => {
  using home = tempHome({
    '.bashrc': 'only_bash() { printf bash-fn; }\n',
    '.zshrc': 'only_zsh() { print -n zsh-fn; }\n',
  });
  await using cache = new ShellSnapshotCache({ createEnv });
  const probe = 'for f in only_bash only_zsh; do type $f >/dev/null 2>&1 && $f; done; printf "|"';
  const zsh = await cache.prepare(launch({ home, script: probe, shell: 'zsh' }));
  const bash = await cache.prepare(launch({ home, script: probe, shell: 'bash' }));
  expect((await runPipe(commandOf(zsh))).stdout).toBe('zsh-fn|');
  expect((await runPipe(commandOf(bash))).stdout).toBe('bash-fn|');
  expect(cache.size).toBe(2);
});
