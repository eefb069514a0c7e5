import { posix } from 'node:path';
import type { Hunk, ParsedPatch } from './parser.ts';
import { type PatchFileSystem, PatchFsError } from './patch-fs.ts';
import { decodeUtf8Strict, Utf8DecodeError } from './strict-utf8.ts';
import { ComputeReplacementsError, deriveNewContents } from './update-file.ts';

/** One verified file operation: absolute paths, and the bytes an update will write. */
export type PatchChange =
  | { readonly type: 'add'; readonly path: string; readonly displayPath: string; readonly contents: string }
  | { readonly type: 'delete'; readonly path: string; readonly displayPath: string }
  | {
      readonly type: 'update';
      readonly path: string;
      /** Absolute destination of a move. */
      readonly movePath: string | undefined;
      /** The path the summary shows (the move destination as written, else the path as written). */
      readonly displayPath: string;
      readonly newContents: string;
    };

/** A patch checked against the files: what applying it will do. */
export interface VerifiedPatch {
  readonly changes: readonly PatchChange[];
  /** The folder relative paths were resolved against. */
  readonly cwd: string;
  /** The envelope text, without any heredoc wrapper. */
  readonly patch: string;
}

/** A patch that cannot be applied to these files; `message` is the original's text (after `apply_patch verification failed: `). */
export class PatchVerificationError extends Error {
  override name = 'PatchVerificationError';
}

/**
 * `path` against `cwd` as the original resolves hunk paths: an absolute path stands alone, a
 * relative one is joined to `cwd`, and `.` / `..` are folded lexically (symlinks are not
 * followed). Summaries still show the paths as written.
 */
export function resolvePatchPath(cwd: string, path: string): string {
  return posix.resolve(cwd, path);
}

/** Options of {@link verifyPatch}. */
export interface VerifyPatchOptions {
  /** Keep each line's `\n` / `\r\n` (the original's default). */
  readonly preserveLineEndings: boolean;
}

/**
 * Reads every file the patch deletes or updates (the original's
 * `maybe_parse_apply_patch_verified`) and computes the updates' new text, in hunk order; the
 * first problem throws {@link PatchVerificationError}. Nothing is written.
 */
export async function verifyPatch(
  parsed: ParsedPatch,
  cwd: string,
  fs: PatchFileSystem,
  options: VerifyPatchOptions,
): Promise<VerifiedPatch> {
  const changes: PatchChange[] = [];
  const targets = new Set<string>();
  for (const hunk of parsed.hunks) {
    const path = resolvePatchPath(cwd, hunk.path);
    if (targets.has(path))
      throw new PatchVerificationError(`invalid patch: multiple operations target ${path}`);
    targets.add(path);
    changes.push(await verifyHunk(hunk, path, cwd, fs, options));
  }
  return { changes, cwd, patch: parsed.patch };
}

async function verifyHunk(
  hunk: Hunk,
  path: string,
  cwd: string,
  fs: PatchFileSystem,
  options: VerifyPatchOptions,
): Promise<PatchChange> {
  switch (hunk.type) {
    case 'add':
      return { type: 'add', path, displayPath: hunk.path, contents: hunk.contents };
    case 'delete':
      await readText(fs, path, `Failed to read ${path}`);
      return { type: 'delete', path, displayPath: hunk.path };
    case 'update': {
      const original = await readText(fs, path, `Failed to read file to update ${path}`);
      let newContents: string;
      try {
        newContents = deriveNewContents(original, path, hunk.chunks, options.preserveLineEndings);
      } catch (error) {
        if (error instanceof ComputeReplacementsError) throw new PatchVerificationError(error.message);
        throw error;
      }
      return {
        type: 'update',
        path,
        movePath: hunk.movePath === undefined ? undefined : resolvePatchPath(cwd, hunk.movePath),
        displayPath: hunk.movePath ?? hunk.path,
        newContents,
      };
    }
  }
}

async function readText(fs: PatchFileSystem, path: string, context: string): Promise<string> {
  try {
    const metadata = await fs.getMetadata(path);
    if (!metadata.isFile) throw new PatchFsError('EOTHER', `path \`${path}\` is not a file`);
    return decodeUtf8Strict(await fs.readFile(path));
  } catch (error) {
    if (error instanceof PatchFsError || error instanceof Utf8DecodeError) {
      throw new PatchVerificationError(`${context}: ${error.message}`);
    }
    throw error;
  }
}
