import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecEnvPolicy } from '@execd/protocol';
import { createEnv } from '@execd/pty-utils';
import type { LaunchCommand, SnapshotLaunchInput, SnapshotPrepareResult } from '../../src/index.ts';
import type { TempHome } from './home.ts';

/** Shell binaries as the tests name them (argv[0] must equal `shell.path`). */
export const SHELLS = {
  bash: { name: 'bash', path: '/bin/bash' },
  zsh: { name: 'zsh', path: '/bin/zsh' },
  sh: { name: 'sh', path: '/bin/sh' },
} as const;

/** What a test varies about a launch. */
export interface LaunchSpec {
  readonly home: TempHome;
  readonly script: string;
  readonly shell?: keyof typeof SHELLS;
  readonly scopeId?: string;
  /** Executor base environment besides HOME and PATH=/usr/bin:/bin. */
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** The request's `env` overlay. */
  readonly env?: Readonly<Record<string, string>>;
  readonly envPolicy?: ExecEnvPolicy;
}

/** Builds a `process/start`-shaped launch: env = policy(base) ⊕ overlay, cwd = HOME, no wrapper. */
export function launch(spec: LaunchSpec): SnapshotLaunchInput {
  const shell = SHELLS[spec.shell ?? 'bash'];
  const base = { HOME: spec.home.path, PATH: '/usr/bin:/bin', ...spec.baseEnv };
  const overlay = spec.env ?? {};
  const prepared = { ...(spec.envPolicy ? createEnv(spec.envPolicy, base) : base), ...overlay };
  const argv = [shell.path, '-lc', spec.script];
  return {
    request: { scopeId: spec.scopeId ?? 'thread-1:local', shell: { name: shell.name, path: shell.path } },
    argv,
    env: overlay,
    envPolicy: spec.envPolicy,
    command: { argv, cwd: spec.home.path, env: prepared },
  };
}

/** PATH as `shell -l` leaves it with an empty HOME: what the system login files set on this host. */
export function systemLoginPath(shell: keyof typeof SHELLS): string {
  const home = mkdtempSync(join(tmpdir(), 'execd-snapshot-empty-'));
  try {
    return execFileSync(SHELLS[shell].path, ['-lc', 'printf %s "$PATH"'], {
      env: { HOME: home, PATH: '/usr/bin:/bin' },
      cwd: home,
      encoding: 'utf8',
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The command of a `restored` (or `fallback`) result; fails the test on any other status. */
export function commandOf(
  result: SnapshotPrepareResult,
  status: 'restored' | 'fallback' = 'restored',
): LaunchCommand {
  if (result.status !== status || !('command' in result)) {
    throw new Error(`expected a ${status} launch, got ${JSON.stringify(result)}`);
  }
  return result.command;
}
