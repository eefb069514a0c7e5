import { basename, isAbsolute, resolve } from 'node:path';
import { type EnvironmentInfo, type Logger, pathToFileUri } from '@execd/protocol';
import {
  type CommandLimits,
  DEFAULT_COMMAND_LIMITS,
  describeLimitsInForce,
  detectResourceControl,
} from '@execd/sandboxing';

/** The shell reported when `$SHELL` is unset or not an absolute path. */
const FALLBACK_SHELL_PATH = '/bin/sh';

/**
 * What this server can do beyond the original's basic process surface. The original's local
 * server reports its own features (network proxy, filesystem, HTTP, config read) as `true`;
 * execd does not implement those methods yet, so it reports them `false` rather than invite
 * calls that would fail with -32601. Shell snapshots (`shellSnapshotV2`) are restored in `process/start`.
 */
export const DEFAULT_CAPABILITIES: EnvironmentInfo['capabilities'] = Object.freeze({
  networkProxyLaunch: false,
  capabilityDiscoverySandbox: false,
  environmentConfigRead: false,
  httpHeaderEnvVars: false,
  sandboxedFileStreaming: false,
  shellSnapshotV2: true,
  processResize: true,
  processList: true,
  retentionGapReporting: true,
});

/** Inputs of {@link localEnvironmentInfo}; every field defaults to this process's own. */
export interface LocalEnvironmentInfoOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** Overrides merged over {@link DEFAULT_CAPABILITIES}. */
  readonly capabilities?: Partial<EnvironmentInfo['capabilities']>;
  /** The resource limits of sandboxed commands (see {@link resourceLimitsInfo}). */
  readonly resourceLimits?: EnvironmentInfo['resourceLimits'];
}

/**
 * The `resourceLimits` of `environment/info`: which cgroup hierarchy this executor uses for its
 * sandboxed commands' limits (found once, at start), and what is in force.
 */
export async function resourceLimitsInfo(
  limits: CommandLimits | false | undefined,
  logger?: Logger,
): Promise<EnvironmentInfo['resourceLimits']> {
  if (process.platform !== 'linux') return undefined;
  const control = await detectResourceControl(logger === undefined ? {} : { logger });
  const inForce = limits === false ? {} : (limits ?? DEFAULT_COMMAND_LIMITS);
  return {
    kind: control.kind,
    controllers: [...control.controllers],
    summary: limits === false ? 'limits turned off' : describeLimitsInForce(control, inForce),
    reason: control.reason,
  };
}

function toUri(path: string, cwd: string): string | undefined {
  try {
    return pathToFileUri(isAbsolute(path) ? resolve(path) : resolve(cwd, path));
  } catch {
    return undefined;
  }
}

/**
 * Describes this executor as `environment/info` does: the user's shell (`$SHELL`, else
 * `/bin/sh`), the working directory, `TMPDIR` as `temporaryDirectories` (a relative value is
 * resolved against the working directory) and the temp dir, all as `file://` URIs.
 */
export function localEnvironmentInfo(options: LocalEnvironmentInfoOptions = {}): EnvironmentInfo {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const shellVar = env.SHELL;
  const shellPath = shellVar && isAbsolute(shellVar) ? shellVar : FALLBACK_SHELL_PATH;

  const temporaryDirectories: string[] = [];
  const tmpdirVar = env.TMPDIR;
  if (tmpdirVar) {
    const uri = toUri(tmpdirVar, cwd);
    if (uri !== undefined) temporaryDirectories.push(uri);
  }
  // `tempDir` is the platform temp dir, chosen as Node's os.tmpdir() does on POSIX.
  const tempDir = temporaryDirectories[0] ?? toUri(env.TMP || env.TEMP || '/tmp', cwd);

  const info: EnvironmentInfo = {
    shell: { name: basename(shellPath), path: shellPath },
    cwd: toUri(cwd, cwd),
    temporaryDirectories,
    tempDir,
    capabilities: { ...DEFAULT_CAPABILITIES, ...options.capabilities },
    ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
  };
  return info;
}
