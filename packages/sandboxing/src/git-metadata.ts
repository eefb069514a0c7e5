import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { existingPath, isSpecialFile, type PathKind, readSmallRegularFile } from './internal/safe-fs.ts';
import { scanNestedNames } from './nested-scan.ts';

/** A `.git` file holding `gitdir: <path>` (or a `commondir`) is one line; anything longer is not one. */
const POINTER_FILE_MAX_BYTES = 4096;

/** Large enough for any hand-written or tool-written repository config. */
const GIT_CONFIG_MAX_BYTES = 262_144;

/**
 * How many directories one launch may visit looking for nested repositories, across all its
 * writable roots. A workspace of a few thousand folders is scanned whole in a few ms; a bigger
 * tree (or a shared `/tmp` full of build trees) is scanned breadth-first up to this bound, so the
 * repositories nearest the roots, the ones a user runs git in, are always found.
 */
export const GIT_SCAN_MAX_DIRS = 8192;

/** Deepest folder (below a writable root) searched for a nested `.git`. */
export const GIT_SCAN_MAX_DEPTH = 16;

/**
 * Folders the scan does not descend into: package-manager trees hold most of a JavaScript
 * workspace's folders (often 10x the rest) and never a repository a person runs git in (npm and
 * pnpm strip `.git` from what they install). A repository planted there by a command is the
 * command's own, not one the host trusts.
 */
export const GIT_SCAN_SKIPPED_DIRS: readonly string[] = ['node_modules'];

/** Agent configuration folders protected at any depth, like `.git`. */
const NESTED_AGENT_DIRS: readonly string[] = ['.codex', '.agents'];

/** A git metadata location to keep read-only. */
export interface GitMetadataPath {
  readonly path: string;
  /** `special`: a FIFO, socket or device where a `.git` should be; never opened, covered instead. */
  readonly kind: PathKind | 'special';
}

/** What a scan found, and whether it stopped at its bound before seeing everything. */
export interface GitScanResult {
  readonly paths: readonly GitMetadataPath[];
  readonly truncated: boolean;
}

/**
 * Config keys whose value git follows to a file or folder it then reads or runs: `include.path`
 * and `includeIf.*.path` (more config), `core.hooksPath` (hooks), `core.fsmonitor` (a program run
 * by every `git status`). When such a target lies in a writable root, it is protected too.
 */
const REDIRECTING_KEY = /^\s*(path|hookspath|fsmonitor)\s*=\s*(.*?)\s*$/i;

function unquote(value: string): string {
  const trimmed = value.replace(/\s[;#].*$/, '');
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')
    ? trimmed.slice(1, -1)
    : trimmed;
}

function expandHome(value: string): string {
  if (value === '~') return homedir();
  return value.startsWith('~/') ? join(homedir(), value.slice(2)) : value;
}

/** Paths a repository's config redirects git to (relative ones against `base`). */
async function configRedirections(gitdir: string, worktree: string): Promise<string[]> {
  const text = await readSmallRegularFile(join(gitdir, 'config'), GIT_CONFIG_MAX_BYTES);
  if (text === undefined) return [];
  const targets: string[] = [];
  for (const line of text.split('\n')) {
    const match = REDIRECTING_KEY.exec(line);
    if (match === null) continue;
    const key = match[1]!.toLowerCase();
    const value = expandHome(unquote(match[2] ?? ''));
    if (value === '' || /^(true|false|yes|no|on|off|0|1)$/i.test(value)) continue;
    // include paths are relative to the config file; hooksPath and fsmonitor to the worktree.
    const base = key === 'path' ? gitdir : worktree;
    targets.push(isAbsolute(value) ? value : resolve(base, value));
  }
  return targets;
}

/** Reads a `gitdir: <path>` pointer file and returns the git directory it names, if it exists. */
async function pointerTarget(gitFile: string): Promise<string | undefined> {
  const text = await readSmallRegularFile(gitFile, POINTER_FILE_MAX_BYTES);
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text ?? '');
  if (match?.[1] === undefined) return undefined;
  const target = await existingPath(resolve(dirname(gitFile), match[1]));
  return target?.kind === 'dir' ? target.path : undefined;
}

/**
 * Every location git would use for the repository whose `.git` entry is `gitEntry`: the entry
 * itself (a directory, a `gitdir:` file, or what a symlink points to), the git directory a
 * pointer names, its `commondir` (a worktree's shared repository, where `config` and `hooks`
 * live), and what the config redirects to. Anything that is not a directory or regular file
 * (a FIFO, a device, a socket) is ignored: never opened, never bound.
 */
export async function repositoryMetadata(gitEntry: string): Promise<GitMetadataPath[]> {
  const entry = await existingPath(gitEntry);
  if (entry === undefined) return [];
  const found: GitMetadataPath[] = [entry];
  const gitdirs: string[] = [];
  if (entry.kind === 'dir') gitdirs.push(entry.path);
  else {
    const target = await pointerTarget(entry.path);
    if (target !== undefined) {
      found.push({ path: target, kind: 'dir' });
      gitdirs.push(target);
    }
  }
  for (const gitdir of [...gitdirs]) {
    const common = (await readSmallRegularFile(join(gitdir, 'commondir'), POINTER_FILE_MAX_BYTES))?.trim();
    if (!common) continue;
    const commonDir = await existingPath(isAbsolute(common) ? common : resolve(gitdir, common));
    if (commonDir?.kind === 'dir') {
      found.push(commonDir);
      gitdirs.push(commonDir.path);
    }
  }
  const worktree = dirname(gitEntry);
  for (const gitdir of gitdirs) {
    for (const target of await configRedirections(gitdir, worktree)) {
      const existing = await existingPath(target);
      if (existing !== undefined) found.push(existing);
    }
  }
  return found;
}

/** The names the scan looks for in every folder below a root. */
const WATCHED_NAMES: readonly string[] = ['.git', ...NESTED_AGENT_DIRS];

/** What protects one watched name the scan found: a repository's metadata, or the folder itself. */
async function nestedMetadata(path: string): Promise<GitMetadataPath[]> {
  if (basename(path) === '.git') {
    if (await isSpecialFile(path)) return [{ path, kind: 'special' }];
    return repositoryMetadata(path);
  }
  // A nested project's agent configuration (`sub/.codex/config.toml`, `sub/.agents`) is trusted
  // by an agent started there, like the root's own.
  const existing = await existingPath(path);
  return existing === undefined ? [] : [existing];
}

/**
 * Finds, below each of `roots` (in order, sharing `maxDirs` folder visits), the git metadata of every nested
 * repository and every nested `.codex` and `.agents` (not a root's own, which the caller handles
 * with its placeholder rules): vendored clones, submodules (whose `.git` pointer files could be
 * rewritten to a gitdir the command controls), repositories of other workspaces under a shared
 * `/tmp`. Breadth-first, no symlinks followed, never inside a `.git`, not into
 * {@link GIT_SCAN_SKIPPED_DIRS}; a root stops when the budget runs out (then `truncated`). The
 * folders are listed in a worker thread (`nested-scan.ts`); what the names found point to is
 * resolved here, afresh at every launch.
 */
export async function findNestedRepositories(
  roots: readonly string[],
  maxDirs: number,
): Promise<GitScanResult[]> {
  const scan = await scanNestedNames({
    roots,
    dirs: maxDirs,
    maxDepth: GIT_SCAN_MAX_DEPTH,
    skipped: GIT_SCAN_SKIPPED_DIRS,
    watched: WATCHED_NAMES,
  });
  return Promise.all(
    scan.roots.map(async ({ found, truncated }) => {
      const metadata = await Promise.all(found.map(nestedMetadata));
      return { paths: metadata.flat(), truncated };
    }),
  );
}
