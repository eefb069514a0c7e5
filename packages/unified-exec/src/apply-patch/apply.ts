import { dirname } from 'node:path/posix';
import { type PatchFileSystem, PatchFsError } from './patch-fs.ts';
import type { VerifiedPatch } from './verify.ts';

/** What applying a verified patch did: exit code 0 with the summary, or 1 with the failure. */
export interface PatchApplyResult {
  readonly exitCode: 0 | 1;
  /** `Success. Updated the following files:` and one `A`/`M`/`D` line per file, or the error line. */
  readonly output: string;
  /** The error of a failed apply (its code says whether a sandbox refused it). */
  readonly error?: PatchFsError | undefined;
}

const encoder = new TextEncoder();

class ApplyStepError extends Error {
  constructor(
    message: string,
    readonly fsError: PatchFsError,
  ) {
    super(message);
  }
}

async function step(context: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    throw new ApplyStepError(context, PatchFsError.from(error));
  }
}

/**
 * Creates the folders above `path`. A failure is not reported by itself: the write that follows
 * fails and names the file (`Failed to write file …`), as the original reports it.
 */
async function createParent(fs: PatchFileSystem, path: string): Promise<void> {
  await fs.createDirectory(dirname(path), { recursive: true }).catch(() => undefined);
}

/**
 * Writes the changes in patch order (the original's `apply_hunks_to_files`): an add creates its
 * folders then the file, a delete removes the file, an update writes the new text (a move writes
 * the destination, then removes the source). The first failure stops; earlier changes stay.
 * The summary lists added, then modified, then deleted files, by the paths as written.
 */
export async function applyVerifiedPatch(
  verified: VerifiedPatch,
  fs: PatchFileSystem,
): Promise<PatchApplyResult> {
  const added: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  try {
    for (const change of verified.changes) {
      if (change.type === 'add') {
        await createParent(fs, change.path);
        await step(`Failed to write file ${change.path}`, () =>
          fs.writeFile(change.path, encoder.encode(change.contents)),
        );
        added.push(change.displayPath);
      } else if (change.type === 'delete') {
        await step(`Failed to delete file ${change.path}`, () => fs.remove(change.path));
        deleted.push(change.displayPath);
      } else if (change.movePath !== undefined) {
        const destination = change.movePath;
        await createParent(fs, destination);
        await step(`Failed to write file ${destination}`, () =>
          fs.writeFile(destination, encoder.encode(change.newContents)),
        );
        await step(`Failed to remove original ${change.path}`, () => fs.remove(change.path));
        modified.push(change.displayPath);
      } else {
        await step(`Failed to write file ${change.path}`, () =>
          fs.writeFile(change.path, encoder.encode(change.newContents)),
        );
        modified.push(change.displayPath);
      }
    }
  } catch (error) {
    if (!(error instanceof ApplyStepError)) throw error;
    return { exitCode: 1, output: `${error.message}\n`, error: error.fsError };
  }
  const lines = [
    'Success. Updated the following files:',
    ...added.map((path) => `A ${path}`),
    ...modified.map((path) => `M ${path}`),
    ...deleted.map((path) => `D ${path}`),
  ];
  return { exitCode: 0, output: `${lines.join('\n')}\n` };
}

/** The tool text of an applied patch: `Exit code: N\nWall time: S seconds\nOutput:\n…` (seconds to one decimal). */
export function formatPatchResult(result: PatchApplyResult, wallTimeSeconds: number): string {
  const seconds = Math.round(wallTimeSeconds * 10) / 10;
  return `Exit code: ${result.exitCode}\nWall time: ${seconds} seconds\nOutput:\n${result.output}`;
}
