import { homedir } from 'node:os';
import { basename, isAbsolute, resolve } from 'node:path';
import { type EnvironmentInfo, type Logger, pathToFileUri } from '@execd/protocol';
import {
  type CommandLimits,
  DEFAULT_COMMAND_LIMITS,
  describeLimitsInForce,
  detectContainment,
  detectResourceControl,
} from '@execd/sandboxing';
import { EXECD_PROVIDER_ID, EXECD_VERSION, platformOs } from './executor-identity.ts';

/** The shell reported when `$SHELL` is unset or not an absolute path. */
const FALLBACK_SHELL_PATH = '/bin/sh';

/**
 * What this server can do beyond the original's basic process surface, every flag the original
 * reports (in its order) plus execd's own. A flag is `true` only for what execd implements, so a
 * client never calls into a -32601 or relies on a behaviour execd lacks; the others are an
 * explicit `false` rather than absent.
 */
export const DEFAULT_CAPABILITIES: EnvironmentInfo['capabilities'] = Object.freeze({
  // `process/start` takes the original's `networkProxy` launch form (../local/process-network.ts).
  networkProxyLaunch: true,
  networkProxyReviewDomains: false,
  credentialMasking: false,
  credentialMaskingCustomProviders: false,
  capabilityDiscoverySandbox: false,
  // `fs/watchMissing` + `fs/missingChanged` (../fs/missing-watch.ts).
  fsWatchMissing: true,
  capabilityDiscoveryV2: false,
  // `environmentConfig/read` (../config/).
  environmentConfigRead: true,
  // `http/request` headers with `valueEnvVar` (../http/).
  httpHeaderEnvVars: true,
  // `fs/open` + `fs/readBlock` honour `sandbox`; `fs/open` mode `replace` + `fs/writeBlock` (../fs/).
  sandboxedFileStreaming: true,
  fileWriteStreaming: true,
  // Shell snapshots are restored in `process/start`.
  shellSnapshotV2: true,
  windowsMxc: false,
  linuxRootWritePreservesDevices: false,
  linuxApprovedRootWritePreservesRestrictions: false,
  processResize: true,
  processList: true,
  retentionGapReporting: true,
  // `process/waitingForInput` needs /proc (../../pty-utils input-wait.ts).
  waitingForInput: process.platform === 'linux',
});

/** Inputs of {@link localEnvironmentInfo}; every field defaults to this process's own. */
export interface LocalEnvironmentInfoOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** Overrides merged over {@link DEFAULT_CAPABILITIES}. */
  readonly capabilities?: Partial<EnvironmentInfo['capabilities']>;
  /** The resource limits of sandboxed commands (see {@link resourceLimitsInfo}). */
  readonly resourceLimits?: EnvironmentInfo['resourceLimits'];
  /** How command trees are contained (see {@link containmentInfo}). */
  readonly containment?: EnvironmentInfo['containment'];
}

/** The `containment` of `environment/info`: a cgroup per command, or process group and session. */
export async function containmentInfo(logger?: Logger): Promise<EnvironmentInfo['containment']> {
  const { kind, summary } = await detectContainment(logger === undefined ? {} : { logger });
  return { kind, summary };
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
 * Describes this executor as `environment/info` does, in the original's field order: the user's
 * shell (`$SHELL`, else `/bin/sh`), execd's version and provider id, the working directory, the
 * home directory (`$HOME`, else the account's), the platform, no prepended `PATH` folders (execd
 * bundles no helpers), `TMPDIR` as `temporaryDirectories` (a relative value is resolved against
 * the working directory) and the temp dir, all paths as `file://` URIs.
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
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : safeHomedir();

  const info: EnvironmentInfo = {
    shell: { name: basename(shellPath), path: shellPath },
    executorVersion: EXECD_VERSION,
    providerId: EXECD_PROVIDER_ID,
    cwd: toUri(cwd, cwd),
    userHomeDir: home === undefined ? undefined : toUri(home, cwd),
    platformOs: platformOs(),
    prependPathDirs: [],
    temporaryDirectories,
    tempDir,
    capabilities: { ...DEFAULT_CAPABILITIES, ...options.capabilities },
    ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    ...(options.containment === undefined ? {} : { containment: options.containment }),
  };
  return info;
}

/** The account's home directory, or undefined when the system has none for this user. */
function safeHomedir(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}
