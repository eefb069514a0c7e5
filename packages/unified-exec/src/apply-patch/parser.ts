/**
 * The apply_patch format (the original's `parser.rs`): an envelope of `*** Begin Patch` …
 * `*** End Patch` around Add / Delete / Update hunks. Parsing is lenient as the original's:
 * whitespace around markers is ignored, and a patch wrapped in a heredoc (`<<'EOF'` … `EOF`) is
 * unwrapped. Only the text is checked here; the filesystem is never touched.
 */

const BEGIN_PATCH_MARKER = '*** Begin Patch';
const END_PATCH_MARKER = '*** End Patch';
const ADD_FILE_MARKER = '*** Add File: ';
const DELETE_FILE_MARKER = '*** Delete File: ';
const UPDATE_FILE_MARKER = '*** Update File: ';
const MOVE_TO_MARKER = '*** Move to: ';
const EOF_MARKER = '*** End of File';
const CHANGE_CONTEXT_MARKER = '@@ ';
const EMPTY_CHANGE_CONTEXT_MARKER = '@@';
const EMPTY_UPDATE_CHUNK = 'Update hunk does not contain any lines';
const ENVIRONMENT_ID_MARKER = '*** Environment ID:';

/** One contiguous replacement inside an Update hunk. */
export interface UpdateFileChunk {
  /** The `@@ <line>` that narrows where the chunk applies (a class or function line). */
  readonly changeContext: string | undefined;
  /** Lines to find (context and `-` lines). */
  readonly oldLines: readonly string[];
  /** Lines to put in their place (context and `+` lines). */
  readonly newLines: readonly string[];
  /** `*** End of File`: `oldLines` are expected at the end of the file. */
  readonly isEndOfFile: boolean;
  /**
   * The chunk's lines in order, one character each: ` ` context (an empty line counts as one),
   * `-` removed, `+` added. Context lines keep the file's own text and line ending.
   */
  readonly kinds: string;
}

/** One file operation of a patch; paths are as written (relative to the working folder or absolute). */
export type Hunk =
  | { readonly type: 'add'; readonly path: string; readonly contents: string }
  | { readonly type: 'delete'; readonly path: string }
  | {
      readonly type: 'update';
      readonly path: string;
      readonly movePath: string | undefined;
      readonly chunks: readonly UpdateFileChunk[];
    };

/** A parsed patch: its hunks and the envelope text without any heredoc wrapper. */
export interface ParsedPatch {
  readonly hunks: readonly Hunk[];
  readonly patch: string;
  /** The `*** Environment ID: <id>` line right after `*** Begin Patch` (trimmed), if any. */
  readonly environmentId?: string | undefined;
}

/** Why a patch text is not a patch; `message` is the original's Display text. */
export class PatchParseError extends Error {
  override name = 'PatchParseError';
  constructor(
    readonly kind: 'invalidPatch' | 'invalidHunk',
    readonly detail: string,
    readonly lineNumber?: number,
  ) {
    super(
      kind === 'invalidPatch' ? `invalid patch: ${detail}` : `invalid hunk at line ${lineNumber}, ${detail}`,
    );
  }
}

/**
 * Rust's `str::lines`: splits on `\n`, drops one `\r` before each `\n`, and yields no empty line
 * after a final newline.
 */
export function rustLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  const last = lines.pop() as string;
  // Only a `\r` that ends a line (before `\n`) is dropped; a final bare `\r` is kept.
  const out = lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (last !== '') out.push(last);
  return out;
}

/** Rust's `str::trim` (Unicode White_Space, as JavaScript's `trim` but without U+FEFF). */
export function rustTrim(text: string): string {
  return rustTrimEnd(rustTrimStart(text));
}

const RUST_WHITESPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;

export function rustTrimStart(text: string): string {
  let start = 0;
  while (start < text.length && RUST_WHITESPACE.test(text[start] as string)) start++;
  return text.slice(start);
}

export function rustTrimEnd(text: string): string {
  let end = text.length;
  while (end > 0 && RUST_WHITESPACE.test(text[end - 1] as string)) end--;
  return text.slice(0, end);
}

/** Parses patch text leniently, as the original's `parse_patch`. Throws {@link PatchParseError}. */
export function parsePatch(text: string): ParsedPatch {
  const lines = rustLines(rustTrim(text));
  const { patchLines, hunkLines } = checkBoundariesLenient(lines);
  const hunks: Hunk[] = [];
  // Indices into one array (no re-slicing): a huge patch is parsed in linear time.
  let at = 0;
  // An optional `*** Environment ID: <id>` first (the multi-environment grammar's preamble).
  const environmentId = environmentIdOf(hunkLines[0]);
  if (environmentId !== undefined) {
    if (environmentIdOf(hunkLines[1]) !== undefined) {
      throw new PatchParseError(
        'invalidPatch',
        'apply_patch environment_id cannot be specified more than once',
      );
    }
    at = 1;
  }
  while (at < hunkLines.length) {
    const { hunk, consumed } = parseOneHunk(hunkLines, at, at + 2);
    hunks.push(hunk);
    at += consumed;
  }
  const patch = patchLines.join('\n');
  return environmentId === undefined ? { hunks, patch } : { hunks, patch, environmentId };
}

// The id of an `*** Environment ID:` line; throws when it is empty.
function environmentIdOf(line: string | undefined): string | undefined {
  if (line === undefined) return undefined;
  const trimmed = rustTrim(line);
  if (!trimmed.startsWith(ENVIRONMENT_ID_MARKER)) return undefined;
  const id = rustTrim(trimmed.slice(ENVIRONMENT_ID_MARKER.length));
  if (id.length === 0)
    throw new PatchParseError('invalidPatch', 'apply_patch environment_id cannot be empty');
  return id;
}

interface Boundaries {
  readonly patchLines: readonly string[];
  readonly hunkLines: readonly string[];
}

function checkBoundariesStrict(lines: readonly string[]): Boundaries {
  const first = lines[0] === undefined ? undefined : rustTrim(lines[0]);
  const last = lines.length === 0 ? undefined : rustTrim(lines[lines.length - 1] as string);
  if (first === BEGIN_PATCH_MARKER && last === END_PATCH_MARKER && lines.length >= 2) {
    return { patchLines: lines, hunkLines: lines.slice(1, -1) };
  }
  if (first !== undefined && first !== BEGIN_PATCH_MARKER) {
    throw new PatchParseError('invalidPatch', "The first line of the patch must be '*** Begin Patch'");
  }
  throw new PatchParseError('invalidPatch', "The last line of the patch must be '*** End Patch'");
}

// A heredoc wrapper (`<<EOF`, `<<'EOF'`, `<<"EOF"` … `EOF`) around the envelope is unwrapped.
function checkBoundariesLenient(lines: readonly string[]): Boundaries {
  try {
    return checkBoundariesStrict(lines);
  } catch (error) {
    const first = lines[0];
    const last = lines[lines.length - 1];
    if (
      lines.length >= 4 &&
      (first === '<<EOF' || first === "<<'EOF'" || first === '<<"EOF"') &&
      last?.endsWith('EOF')
    ) {
      return checkBoundariesStrict(lines.slice(1, -1));
    }
    throw error;
  }
}

function parseOneHunk(
  lines: readonly string[],
  at: number,
  lineNumber: number,
): { hunk: Hunk; consumed: number } {
  const firstLine = rustTrim(lines[at] as string);
  if (firstLine.startsWith(ADD_FILE_MARKER)) {
    const added: string[] = [];
    for (let index = at + 1; index < lines.length && (lines[index] as string).startsWith('+'); index++) {
      added.push(`${(lines[index] as string).slice(1)}\n`);
    }
    const contents = added.join('');
    const consumed = 1 + added.length;
    return { hunk: { type: 'add', path: firstLine.slice(ADD_FILE_MARKER.length), contents }, consumed };
  }
  if (firstLine.startsWith(DELETE_FILE_MARKER)) {
    return { hunk: { type: 'delete', path: firstLine.slice(DELETE_FILE_MARKER.length) }, consumed: 1 };
  }
  if (firstLine.startsWith(UPDATE_FILE_MARKER)) {
    const path = firstLine.slice(UPDATE_FILE_MARKER.length);
    let consumed = 1;
    // The move line is matched untrimmed, as the original does.
    const moveLine = lines[at + 1];
    const movePath = moveLine?.startsWith(MOVE_TO_MARKER) ? moveLine.slice(MOVE_TO_MARKER.length) : undefined;
    if (movePath !== undefined) consumed++;
    const chunks: UpdateFileChunk[] = [];
    while (at + consumed < lines.length) {
      const head = lines[at + consumed] as string;
      // Blank lines between chunks are skipped; a line starting with `*` begins the next hunk.
      if (rustTrim(head).length === 0) {
        consumed++;
        continue;
      }
      if (head.startsWith('*')) break;
      const parsed = parseUpdateFileChunk(lines, at + consumed, lineNumber + consumed, chunks.length === 0);
      chunks.push(parsed.chunk);
      consumed += parsed.consumed;
    }
    if (chunks.length === 0) {
      throw new PatchParseError('invalidHunk', `Update file hunk for path '${path}' is empty`, lineNumber);
    }
    return { hunk: { type: 'update', path, movePath, chunks }, consumed };
  }
  throw new PatchParseError(
    'invalidHunk',
    `'${firstLine}' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'`,
    lineNumber,
  );
}

function parseUpdateFileChunk(
  lines: readonly string[],
  at: number,
  lineNumber: number,
  allowMissingContext: boolean,
): { chunk: UpdateFileChunk; consumed: number } {
  const head = lines[at] as string;
  let changeContext: string | undefined;
  let startIndex: number;
  if (head === EMPTY_CHANGE_CONTEXT_MARKER) {
    startIndex = 1;
  } else if (head.startsWith(CHANGE_CONTEXT_MARKER)) {
    changeContext = head.slice(CHANGE_CONTEXT_MARKER.length);
    startIndex = 1;
  } else {
    if (!allowMissingContext) {
      throw new PatchParseError(
        'invalidHunk',
        `Expected update hunk to start with a @@ context marker, got: '${head}'`,
        lineNumber,
      );
    }
    startIndex = 0;
  }
  if (at + startIndex >= lines.length) {
    throw new PatchParseError('invalidHunk', EMPTY_UPDATE_CHUNK, lineNumber + 1);
  }
  const oldLines: string[] = [];
  const newLines: string[] = [];
  let kinds = '';
  let isEndOfFile = false;
  let parsed = 0;
  for (let index = at + startIndex; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line === EOF_MARKER) {
      if (parsed === 0) throw new PatchParseError('invalidHunk', EMPTY_UPDATE_CHUNK, lineNumber + 1);
      isEndOfFile = true;
      parsed++;
      break;
    }
    const marker = line[0];
    if (marker === undefined) {
      // An empty line stands for an empty context line.
      oldLines.push('');
      newLines.push('');
      kinds += ' ';
    } else if (marker === ' ') {
      oldLines.push(line.slice(1));
      newLines.push(line.slice(1));
      kinds += ' ';
    } else if (marker === '+') {
      newLines.push(line.slice(1));
      kinds += '+';
    } else if (marker === '-') {
      oldLines.push(line.slice(1));
      kinds += '-';
    } else {
      if (parsed === 0) {
        throw new PatchParseError(
          'invalidHunk',
          `Unexpected line found in update hunk: '${line}'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)`,
          lineNumber + startIndex,
        );
      }
      // The start of the next chunk.
      break;
    }
    parsed++;
  }
  return { chunk: { changeContext, oldLines, newLines, isEndOfFile, kinds }, consumed: parsed + startIndex };
}
