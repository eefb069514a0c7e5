import { chmod, lstat, mkdir, mkdtemp, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ExecError, RpcError } from '@execd/protocol';
import { tempDirContaining } from '@execd/pty-utils';

/** Prefix of each proxy's own folder inside the private base folder. */
const SOCKET_DIR_PREFIX = 'np-';

/** Where a proxy keeps its unix sockets. */
export interface SocketDir {
  readonly path: string;
  /** True when the proxy created it (and removes it on close). */
  readonly owned: boolean;
}

const uid = (): number => process.getuid?.() ?? 0;

/** Why `dir` and its ancestors are not private to this user (and root), or undefined when they are. */
async function untrustedAncestor(dir: string): Promise<string | undefined> {
  let current = await realpath(dir);
  for (;;) {
    const info = await stat(current);
    if (!info.isDirectory()) return `${current} is not a directory`;
    if (info.uid !== 0 && info.uid !== uid()) return `${current} is owned by uid ${info.uid}`;
    if ((info.mode & 0o022) !== 0) return `${current} is writable by group or others`;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Creates (or checks) `base` as a 0700 folder of this user whose ancestors nobody else can write. */
async function ensurePrivateBase(base: string): Promise<string | undefined> {
  const temp = await tempDirContaining(base);
  if (temp !== undefined) return `${base} is under the temp folder ${temp}`;
  try {
    await mkdir(base, { recursive: true, mode: 0o700 });
    const info = await lstat(base);
    if (!info.isDirectory()) return `${base} is not a directory`;
    if (info.uid !== uid()) return `${base} is owned by uid ${info.uid}`;
    if ((info.mode & 0o077) !== 0) await chmod(base, 0o700);
    return await untrustedAncestor(base);
  } catch (error) {
    return `${base}: ${(error as Error).message}`;
  }
}

/** The private base folders to try, best first (see `prepareSocketDir`). */
async function baseCandidates(): Promise<string[]> {
  const candidates: string[] = [];
  if (uid() === 0) {
    const run = await stat('/run').catch(() => undefined);
    if (run?.isDirectory()) candidates.push('/run/execd');
  }
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime?.startsWith('/')) {
    // The XDG spec: owned by the user, mode 0700. Anything else is not the user's runtime dir.
    const info = await stat(runtime).catch(() => undefined);
    if (info?.isDirectory() && info.uid === uid() && (info.mode & 0o077) === 0)
      candidates.push(join(runtime, 'execd'));
  }
  const cacheHome = process.env.XDG_CACHE_HOME;
  candidates.push(join(cacheHome?.startsWith('/') ? cacheHome : join(homedir(), '.cache'), 'execd'));
  return candidates;
}

/**
 * Picks the folder for a proxy's sockets. An explicit `socketDir` is used as is, unless it lies
 * under a temp folder (sandboxed commands may write there): `RpcError('invalidParams')`. Otherwise
 * a fresh 0700 folder inside the first private base that works: `/run/execd` (root),
 * `$XDG_RUNTIME_DIR/execd`, then `${XDG_CACHE_HOME:-~/.cache}/execd`; a base must be this user's,
 * 0700, outside every temp folder, with no ancestor writable by anyone but root and this user.
 * None usable: `ExecError('unsupported')` naming what was tried.
 */
export async function prepareSocketDir(explicit: string | undefined): Promise<SocketDir> {
  if (explicit !== undefined) {
    const temp = await tempDirContaining(explicit);
    if (temp !== undefined) {
      throw new RpcError(
        'invalidParams',
        `socketDir ${explicit} is under the temp folder ${temp}, which sandboxed commands can write; ` +
          'choose a private folder outside /tmp, os.tmpdir() and $TMPDIR',
      );
    }
    return { path: explicit, owned: false };
  }
  const problems: string[] = [];
  for (const base of await baseCandidates()) {
    const problem = await ensurePrivateBase(base);
    if (problem === undefined) return { path: await mkdtemp(join(base, SOCKET_DIR_PREFIX)), owned: true };
    problems.push(problem);
  }
  throw new ExecError(
    'unsupported',
    `no private folder for the network proxy sockets (${problems.join('; ')}); ` +
      'set XDG_RUNTIME_DIR to a 0700 folder you own, or pass socketDir',
  );
}
