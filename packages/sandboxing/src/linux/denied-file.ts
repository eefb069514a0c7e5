import { chmod, lstat, mkdir, mkdtemp, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The bind source of denied files: an empty file of mode 000 in a private folder. */
export interface DeniedFileSource {
  /** The empty mode-000 file. */
  readonly file: string;
  /** Its folder (masked inside every sandbox started after it exists: see {@link deniedFileDir}). */
  readonly dir: string;
}

const FILE_NAME = 'denied';

let current: Promise<DeniedFileSource> | undefined;
let createdDir: string | undefined;

/** True while the file is still what it was made as: a regular empty file of mode 000, ours. */
async function intact(file: string): Promise<boolean> {
  try {
    const info = await lstat(file);
    return info.isFile() && info.size === 0 && (info.mode & 0o7777) === 0 && info.uid === process.getuid?.();
  } catch {
    return false;
  }
}

/** True when `dir` is a real folder (not a symlink) of ours that nobody else may enter. */
async function privateDir(dir: string): Promise<boolean> {
  try {
    const info = await lstat(dir);
    return info.isDirectory() && info.uid === process.getuid?.() && (info.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Makes the empty mode-000 file in `dir` (anew when something else is there). */
async function fill(dir: string): Promise<DeniedFileSource> {
  const file = join(dir, FILE_NAME);
  if (!(await intact(file))) {
    await unlink(file).catch(() => {});
    await writeFile(file, '', { mode: 0o000, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error; // another executor made it meanwhile: checked below
    });
    await chmod(file, 0o000);
    if (!(await intact(file))) throw new Error(`sandboxing: cannot make the denied-file source ${file}`);
  }
  createdDir = dir;
  return { file, dir };
}

/**
 * One folder per user, shared by the executors of that user (so none is left behind per
 * process); a private temporary folder when that one is not safely ours.
 */
async function create(): Promise<DeniedFileSource> {
  const shared = join(tmpdir(), `execd-denied-${process.getuid?.() ?? 'user'}`);
  await mkdir(shared, { mode: 0o700 }).catch(() => {});
  if (await privateDir(shared)) {
    try {
      return await fill(shared);
    } catch {
      // Fall through to a folder of this process's own.
    }
  }
  return fill(await mkdtemp(join(tmpdir(), 'execd-denied-')));
}

/**
 * The empty mode-000 file bound over denied files, checked before each use (a sandbox that was
 * already running when it was made, with its folder writable, could have changed it: it is then
 * made anew). Inside the sandbox every capability is dropped, so even uid 0 gets `EACCES` opening
 * it: a read of a denied file fails with "Permission denied" (reported as a sandbox denial), as
 * the original's `--perms 000` data binds.
 */
export async function deniedFileSource(): Promise<DeniedFileSource> {
  const previous = current;
  if (previous !== undefined) {
    const source = await previous.catch(() => undefined);
    if (source !== undefined && (await intact(source.file))) return source;
    if (current !== previous) return deniedFileSource();
  }
  current = create();
  current.catch(() => {
    current = undefined;
  });
  return current;
}

/** The folder of the denied-file source once made: masked in every later sandbox. */
export function deniedFileDir(): string | undefined {
  return createdDir;
}
