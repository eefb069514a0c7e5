import { join } from 'node:path';
import { readdir } from './internal/fs-calls.ts';
import { existingPath, type PathKind } from './internal/safe-fs.ts';

/**
 * Host files only root may read that no sandboxed command needs. A sandboxed command runs as
 * uid 0 mapped to the executor's uid: with a root executor it owns root's files, so the mode bits
 * that keep them from other users do not keep them from it. They are masked in every sandbox
 * (an empty file or folder in their place) when the executor runs as root.
 */
export const ROOT_ONLY_HOST_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
];

/** A path masked inside the sandbox. */
export interface MaskedPath {
  readonly path: string;
  readonly kind: PathKind;
}

async function sshHostKeys(): Promise<string[]> {
  try {
    const names = await readdir('/etc/ssh');
    return names.filter((name) => /^ssh_host_.*_key$/.test(name)).map((name) => join('/etc/ssh', name));
  } catch {
    return [];
  }
}

async function existing(candidates: readonly string[]): Promise<MaskedPath[]> {
  const found = new Map<string, PathKind>();
  for (const candidate of candidates) {
    const entry = await existingPath(candidate);
    if (entry !== undefined) found.set(entry.path, entry.kind);
  }
  return [...found].map(([path, kind]) => ({ path, kind }));
}

/**
 * The root-only host secrets that exist here, looked up once per process: system files such as
 * `/etc/shadow` and the SSH host keys do not come and go while an executor runs, and a launch
 * should not stat them again every time.
 */
let rootOnlySecrets: Promise<MaskedPath[]> | undefined;

/**
 * What to mask in a sandbox: the `extra` paths (the executor's own secrets, e.g. its auth token
 * file; always), plus, unless `fullAccess`, {@link ROOT_ONLY_HOST_SECRETS} and the SSH host keys
 * when this process runs as root. Only existing files and folders (after symlinks), canonical.
 */
export async function hostSecretsToMask(
  extra: readonly string[] = [],
  fullAccess = false,
): Promise<MaskedPath[]> {
  const masked = await existing(extra);
  if (fullAccess || process.getuid?.() !== 0) return masked;
  rootOnlySecrets ??= (async () => existing([...ROOT_ONLY_HOST_SECRETS, ...(await sshHostKeys())]))();
  const seen = new Set(masked.map((item) => item.path));
  return [...masked, ...(await rootOnlySecrets).filter((item) => !seen.has(item.path))];
}
