// Spec §8.10 shell-command tests at this package's level: `bash_snapshot_filters_invalid_exports`,
// `bash_snapshot_preserves_multiline_exports`, plus the capture scripts against each real shell.
import { createEnv } from '@execd/pty-utils';
import { expect, test } from 'vitest';
import {
  captureScript,
  captureSnapshot,
  DEFAULT_CAPTURE_LIMITS,
  parseCaptureOutput,
  restoreCommand,
  runCaptureCommand,
  type SnapshotShell,
} from '../src/index.ts';
import { launch, runPipe, SHELLS, tempHome } from './helpers/index.ts';

const options = { runner: runCaptureCommand, limits: DEFAULT_CAPTURE_LIMITS, createEnv };

test('bash snapshot filters invalid export names and never carries PWD', async () => {
  using home = tempHome();
  const input = launch({
    home,
    script: 'true',
    baseEnv: {
      BASH_ENV: '/dev/null',
      VALID_NAME: 'ok',
      PWD: '/tmp/stale',
      'NEXTEST_BIN_EXE_codex-write-config-schema': '/path/to/bin',
      'BAD-NAME': 'broken',
    },
  });
  const result = await captureSnapshot('bash', input.command, 0, options);
  expect(result.ok).toBe(true);
  if (!result.ok) return;
  expect(result.snapshot.env.VALID_NAME).toBe('ok');
  expect(Object.keys(result.snapshot.env)).not.toContain('PWD');
  expect(Object.keys(result.snapshot.env).filter((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))).toEqual(
    [],
  );
  expect(result.snapshot.state).not.toContain('BAD-NAME');
  expect(result.snapshot.state).not.toContain('NEXTEST_BIN_EXE');
});

test('bash snapshot preserves multiline exports exactly', async () => {
  const cert = '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n\n';
  using home = tempHome({ '.bashrc': `export MULTILINE_CERT='${cert}'\n` });
  const input = launch({ home, script: 'printf "%s" "$MULTILINE_CERT"' });
  const result = await captureSnapshot('bash', input.command, 0, options);
  expect(result.ok && result.snapshot.env.MULTILINE_CERT).toBe(cert);
  if (!result.ok) return;
  const restored = restoreCommand(result.snapshot, { command: input.command, shellStart: 0, requestEnv: {} });
  expect(await runPipe(restored)).toEqual({ stdout: cert, stderr: '', exitCode: 0 });
});

test.each(['bash', 'zsh', 'sh'] as const)(
  'the %s capture script survives set -u, aliases and noise',
  async (shell) => {
    const rc = { bash: '.bashrc', zsh: '.zshrc', sh: '.profile' }[shell];
    using home = tempHome({
      [rc]: [
        "echo 'profile noise'",
        "alias printf='echo HIJACKED'",
        "alias set='echo HIJACKED'",
        shell === 'sh' ? '' : 'unset() { echo HIJACKED; }; builtin() { echo HIJACKED; }',
        'export APP_SETTING=value',
        'set -u',
        '',
      ].join('\n'),
    });
    const { path } = SHELLS[shell];
    const run = await runCaptureCommand(
      {
        argv: [path, '-lc', captureScript(shell as SnapshotShell)],
        cwd: home.path,
        env: { HOME: home.path, PATH: '/usr/bin:/bin' },
      },
      DEFAULT_CAPTURE_LIMITS,
    );
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const parsed = parseCaptureOutput(run.stdout);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.sections.env.get('APP_SETTING')).toBe('value');
    expect(parsed.sections.options).not.toContain('HIJACKED');
  },
);

test('a capture command that cannot start is a spawnFailed failure', async () => {
  using home = tempHome();
  const run = await runCaptureCommand(
    { argv: ['/nonexistent/shell', '-lc', 'true'], cwd: home.path, env: {} },
    DEFAULT_CAPTURE_LIMITS,
  );
  expect(run).toMatchObject({ ok: false, reason: 'spawnFailed' });
});
