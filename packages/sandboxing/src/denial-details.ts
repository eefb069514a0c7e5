import type { SandboxType } from '@execd/protocol';
import { type CommandOutput, isLikelySandboxDenied, QUICK_REJECT_EXIT_CODES } from './denial.ts';

/** What a sandbox refused, as far as the output tells. */
export interface SandboxDenial {
  /** The original's verdict, widened by network failures under a network-off sandbox. */
  readonly denied: boolean;
  /** A write (incl. create/remove/rename), a read, or a network connection. */
  readonly kind?: 'write' | 'read' | 'network';
  /** The path, `host:port` or host named by the refusal. */
  readonly target?: string;
}

/** Options of {@link describeSandboxDenial}. */
export interface DescribeDenialOptions {
  /** The sandbox kept the network off: connection failures then count as denials. */
  readonly networkDisabled?: boolean;
}

/** An errno text a refusal ends with (coreutils/shells), or the Node/Python spelling of one. */
const REASON =
  /(permission denied|read-only file system|operation not permitted|\b(?:EACCES|EROFS|EPERM)\b)/i;

/** The quoted string or last token right before `: <reason>`. */
const TARGET_BEFORE_REASON =
  /(?:'([^']*)'|‘([^’]*)’|"([^"]*)"|(\S+))\s*:\s*(?:permission denied|read-only file system|operation not permitted)/i;

/** Python's `PermissionError: [Errno 13] Permission denied: '/x'`. */
const PYTHON_TARGET = /(?:permission denied|read-only file system|operation not permitted): '([^']*)'/i;

/** Node's `EROFS: read-only file system, open '/x'`. */
const NODE_ERROR = /\b(?:EACCES|EROFS|EPERM): [^,\n]*, (\w+) '([^']*)'/;

const WRITE_HINT =
  /read-only file system|\bEROFS\b|cannot (?:touch|create|remove|move|overwrite|write|link)|can't create|failed to create|changing (?:permissions|ownership)|could not (?:lock|write|create)|unable to (?:write|create|remove)|for writing/i;
const READ_HINT =
  /cannot (?:open .*for reading|read|access|stat|open directory)|(?:could not|unable to|failed to) read|^(?:cat|head|tail|less|grep|wc|ls): /i;
const NODE_WRITE_CALLS = new Set([
  'mkdir',
  'rmdir',
  'unlink',
  'rename',
  'write',
  'symlink',
  'link',
  'chmod',
  'chown',
  'utime',
  'copyfile',
]);
const NODE_READ_CALLS = new Set(['scandir', 'read', 'opendir', 'stat', 'lstat', 'readlink', 'access']);

/** Failures that mean "no network" when the sandbox turned it off. */
const NETWORK_FAILURE =
  /couldn't connect to server|failed to connect to|could not resolve host|temporary failure in name resolution|name or service not known|network is unreachable|connection refused|no route to host|\b(?:ECONNREFUSED|ENETUNREACH|ENOTFOUND|EAI_AGAIN)\b|\/dev\/(?:tcp|udp)\//i;
/** A socket call refused outright: `bash: socket: Operation not permitted`. */
const SOCKET_CALL =
  /\b(?:socket|connect|bind|listen|getaddrinfo)\b[^\n]*(?:operation not permitted|permission denied)/i;

function networkTarget(line: string): string | undefined {
  const devTcp = /\/dev\/(?:tcp|udp)\/([^/\s:]+)\/(\d+)/.exec(line);
  if (devTcp) return `${devTcp[1]}:${devTcp[2]}`;
  const port = /(?:connect to|connecting to) (\[[0-9a-f:.]+\]|[\w.-]+) port (\d+)/i.exec(line);
  if (port) return `${port[1]}:${port[2]}`;
  const node = /\b(?:ECONNREFUSED|ENETUNREACH) (\S+:\d+)/.exec(line);
  if (node) return node[1];
  const host = /(?:could not resolve host:?|ENOTFOUND|EAI_AGAIN) ([\w.-]+)/i.exec(line);
  return host?.[1];
}

function pathTarget(line: string): { target?: string | undefined; call?: string | undefined } {
  const node = NODE_ERROR.exec(line);
  if (node) return { call: node[1], target: node[2] };
  const python = PYTHON_TARGET.exec(line);
  if (python) return { target: python[1] };
  const before = TARGET_BEFORE_REASON.exec(line);
  if (!before) return {};
  const quoted = before[1] ?? before[2] ?? before[3];
  if (quoted !== undefined) return { target: quoted };
  // An unquoted token counts only when it looks like a path (not `socket:` or `failed:`).
  const token = before[4];
  return token !== undefined && /[/.]/.test(token) ? { target: token } : {};
}

function describeLine(line: string, networkDisabled: boolean): Omit<SandboxDenial, 'denied'> | undefined {
  if (networkDisabled && (NETWORK_FAILURE.test(line) || SOCKET_CALL.test(line))) {
    const target = networkTarget(line);
    return target === undefined ? { kind: 'network' } : { kind: 'network', target };
  }
  if (!REASON.test(line)) return undefined;
  const { target, call } = pathTarget(line);
  let kind: SandboxDenial['kind'];
  if (WRITE_HINT.test(line) || (call !== undefined && NODE_WRITE_CALLS.has(call))) kind = 'write';
  else if (READ_HINT.test(line) || (call !== undefined && NODE_READ_CALLS.has(call))) kind = 'read';
  return { ...(kind === undefined ? {} : { kind }), ...(target === undefined ? {} : { target }) };
}

/** Picks the most informative line: one with a kind and target, else the first with either. */
function describeText(text: string, networkDisabled: boolean): Omit<SandboxDenial, 'denied'> | undefined {
  let fallback: Omit<SandboxDenial, 'denied'> | undefined;
  for (const line of text.split(/\r?\n/)) {
    const found = describeLine(line, networkDisabled);
    if (found === undefined) continue;
    if (found.kind !== undefined && found.target !== undefined) return found;
    if (fallback === undefined || (fallback.kind === undefined && fallback.target === undefined))
      fallback = found;
  }
  return fallback;
}

/**
 * Whether a command was refused by its sandbox and, beyond the original, what was refused when
 * the output says so: `{denied, kind?, target?}`. `denied` is {@link isLikelySandboxDenied}, also
 * true for a failed network connection under a network-off sandbox (not for exit 2/126/127).
 * Parses coreutils/shell (`touch: cannot touch '/etc/x': …`, `bash: /etc/x: Read-only file
 * system`), Python, Node, curl and bash `/dev/tcp` messages.
 */
export function describeSandboxDenial(
  sandboxType: SandboxType,
  output: CommandOutput,
  options: DescribeDenialOptions = {},
): SandboxDenial {
  const networkDisabled = options.networkDisabled === true;
  const text = [output.stderr, output.stdout, output.aggregated].join('\n');
  const details =
    sandboxType === 'none' || output.exitCode === 0 ? undefined : describeText(text, networkDisabled);
  let denied = isLikelySandboxDenied(sandboxType, output);
  if (!denied && details?.kind === 'network' && !QUICK_REJECT_EXIT_CODES.includes(output.exitCode))
    denied = true;
  if (
    !denied &&
    sandboxType !== 'none' &&
    output.exitCode !== 0 &&
    !QUICK_REJECT_EXIT_CODES.includes(output.exitCode)
  ) {
    const mountRefusal = MOUNT_REFUSALS.find((pattern) => pattern.test(text));
    if (mountRefusal)
      return { denied: true, kind: 'write', ...(details?.target ? { target: details.target } : {}) };
  }
  return denied ? { denied, ...details } : { denied };
}

/**
 * Refusals that only the sandbox's mount layout causes, which the original's keyword list misses:
 * renaming a protected bind mount (`.git`) fails with EBUSY, hard-linking across the read-only
 * re-bind with EXDEV, and a nested user namespace (blocked by `--disable-userns`) with ENOSPC.
 */
const MOUNT_REFUSALS: readonly RegExp[] = [
  /device or resource busy/i,
  /invalid cross-device link/i,
  /unshare[^\n]*no space left on device/i,
];
