import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ExecError } from '@execd/protocol';
import type { SpawnOptions } from '../types.ts';

/**
 * Search path used when the child's environment has no `PATH`, as libuv's and glibc's `execvp` do
 * (`_PATH_DEFPATH`), so that validation finds exactly what the exec would.
 */
export const DEFAULT_EXEC_PATH = '/usr/bin:/bin';

/** A spawn request that passed validation: everything the OS needs, already checked. */
export interface ResolvedSpawn {
  /** Absolute path of the program `argv[0]` named. */
  readonly file: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  /** What the child sees as `argv[0]`. */
  readonly arg0: string;
  readonly env: Readonly<Record<string, string>>;
}

function spawnFailed(message: string, cause?: unknown): ExecError {
  return new ExecError('spawnFailed', message, cause === undefined ? undefined : { cause });
}

function checkText(value: string, what: string): void {
  if (value.includes('\0')) throw spawnFailed(`${what} contains a NUL byte: ${JSON.stringify(value)}`);
}

// The checks below are synchronous on purpose: a handful of stat/access calls cost microseconds,
// while a thread-pool round trip each (async fs) made a PATH search cost milliseconds per spawn.

function checkCwd(cwd: string): void {
  if (!isAbsolute(cwd)) throw spawnFailed(`cwd must be an absolute path: ${cwd}`);
  const info = statSync(cwd, { throwIfNoEntry: false });
  if (info === undefined) throw spawnFailed(`cwd does not exist: ${cwd}`);
  if (!info.isDirectory()) throw spawnFailed(`cwd is not a directory: ${cwd}`);
  try {
    accessSync(cwd, constants.X_OK);
  } catch (error) {
    throw spawnFailed(`cwd is not accessible: ${cwd}`, error);
  }
}

/** 'ok', or why the candidate cannot be executed. */
function probeExecutable(path: string): 'ok' | 'missing' | 'notFile' | 'notExecutable' {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(path, { throwIfNoEntry: false });
  } catch {
    return 'missing'; // ENOTDIR, EACCES on a parent directory, ...
  }
  if (info === undefined) return 'missing';
  if (!info.isFile()) return 'notFile';
  try {
    accessSync(path, constants.X_OK);
    return 'ok';
  } catch {
    return 'notExecutable';
  }
}

function resolveProgram(program: string, env: Readonly<Record<string, string>>, cwd: string): string {
  if (program.includes('/')) {
    const path = resolve(cwd, program);
    const probe = probeExecutable(path);
    if (probe === 'ok') return path;
    const why =
      probe === 'missing' ? 'does not exist' : probe === 'notFile' ? 'is not a file' : 'is not executable';
    throw spawnFailed(`program ${why}: ${path}`);
  }
  const searchPath = env.PATH ?? DEFAULT_EXEC_PATH;
  let denied: string | undefined;
  for (const dir of searchPath.split(':')) {
    // An empty PATH entry means the current directory, which for the child is `cwd`.
    const path = resolve(cwd, dir, program);
    const probe = probeExecutable(path);
    if (probe === 'ok') return path;
    if (probe === 'notExecutable') denied ??= path;
  }
  if (denied !== undefined) throw spawnFailed(`program is not executable: ${denied}`);
  throw spawnFailed(`program not found: ${program} (PATH=${searchPath})`);
}

/**
 * Validates a spawn request before anything is forked: argv, env and cwd are well-formed, cwd is an
 * existing directory, and `argv[0]` names an executable file (searched on the *child's* `PATH`
 * when it has no slash). Every failure is an `ExecError` with code `spawnFailed` naming the path.
 */
export function resolveSpawn(options: SpawnOptions): ResolvedSpawn {
  const { argv, cwd, env } = options;
  const program = argv[0];
  if (program === undefined || program === '') throw spawnFailed('argv must name a program');
  for (const arg of argv) checkText(arg, 'argument');
  checkText(cwd, 'cwd');
  for (const [key, value] of Object.entries(env)) {
    if (key === '' || key.includes('='))
      throw spawnFailed(`invalid environment variable name: ${JSON.stringify(key)}`);
    checkText(key, 'environment variable name');
    checkText(value, `environment variable ${key}`);
  }
  const arg0 = options.arg0 ?? program;
  checkText(arg0, 'arg0');
  checkCwd(cwd);
  const file = resolveProgram(program, env, cwd);
  return { file, argv, cwd, arg0, env };
}
