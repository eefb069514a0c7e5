import type { UpdateFileChunk } from './parser.ts';
import { seekSequence } from './seek-sequence.ts';

/** A chunk whose lines (or `@@` context) are not in the file; `message` is the original's text. */
export class ComputeReplacementsError extends Error {
  override name = 'ComputeReplacementsError';
}

/**
 * One line of a replacement: `keep` takes the matched file line at that offset as it is (a
 * context line), a string is a new line (the patch's text).
 */
type SegmentLine = { readonly keep: number } | string;

/** Replace `oldLength` lines at `start` with `segment` (`newLines`: the same as plain text). */
interface Replacement {
  readonly start: number;
  readonly oldLength: number;
  readonly newLines: readonly string[];
  readonly segment: readonly SegmentLine[];
}

// The new lines of a chunk as file-line operations: context kept, removed skipped, added written.
function segmentOf(chunk: UpdateFileChunk, trimmedOld: boolean, trimmedNew: boolean): SegmentLine[] {
  const ops: Array<{ kind: string; text: string; old: number }> = [];
  let oldIndex = 0;
  let newIndex = 0;
  for (const kind of chunk.kinds) {
    if (kind === '+') ops.push({ kind, text: chunk.newLines[newIndex++] as string, old: -1 });
    else {
      ops.push({ kind, text: chunk.oldLines[oldIndex] as string, old: oldIndex });
      oldIndex++;
      if (kind === ' ') newIndex++;
    }
  }
  // The trailing empty line that stood for the file's final newline was dropped from the match.
  if (trimmedOld) {
    const last = ops.findLastIndex((op) => op.kind !== '+');
    if (last >= 0) {
      const [removed] = ops.splice(last, 1);
      if (removed?.kind === '-' && trimmedNew) {
        const lastAdd = ops.findLastIndex((op) => op.kind === '+');
        if (lastAdd >= 0) ops.splice(lastAdd, 1);
      }
    }
  }
  return ops.filter((op) => op.kind !== '-').map((op) => (op.kind === ' ' ? { keep: op.old } : op.text));
}

/**
 * Where each chunk applies in `lines` (the original's `compute_replacements`), in file order.
 * Chunks are searched in order, each after the previous one's match; `path` names the file in
 * the error texts.
 */
export function computeReplacements(
  lines: readonly string[],
  path: string,
  chunks: readonly UpdateFileChunk[],
): Replacement[] {
  const replacements: Replacement[] = [];
  let lineIndex = 0;
  for (const chunk of chunks) {
    if (chunk.changeContext !== undefined) {
      const found = seekSequence(lines, [chunk.changeContext], lineIndex, false);
      if (found === undefined) {
        throw new ComputeReplacementsError(`Failed to find context '${chunk.changeContext}' in ${path}`);
      }
      lineIndex = found + 1;
    }
    if (chunk.oldLines.length === 0) {
      // A pure addition goes at the end (before a final empty line, if any).
      const start = lines.length > 0 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
      replacements.push({ start, oldLength: 0, newLines: chunk.newLines, segment: chunk.newLines });
      continue;
    }
    let pattern = chunk.oldLines;
    let newLines = chunk.newLines;
    let trimmedOld = false;
    let trimmedNew = false;
    let found = seekSequence(lines, pattern, lineIndex, chunk.isEndOfFile);
    if (found === undefined && pattern[pattern.length - 1] === '') {
      // A trailing empty line stands for the file's final newline, which `lines` does not hold.
      pattern = pattern.slice(0, -1);
      trimmedOld = true;
      if (newLines[newLines.length - 1] === '') {
        newLines = newLines.slice(0, -1);
        trimmedNew = true;
      }
      found = seekSequence(lines, pattern, lineIndex, chunk.isEndOfFile);
    }
    if (found === undefined) {
      throw new ComputeReplacementsError(
        `Failed to find expected lines in ${path}:\n${chunk.oldLines.join('\n')}`,
      );
    }
    replacements.push({
      start: found,
      oldLength: pattern.length,
      newLines,
      segment: segmentOf(chunk, trimmedOld, trimmedNew),
    });
    lineIndex = found + pattern.length;
  }
  return replacements.sort((a, b) => a.start - b.start);
}

type Ending = '\n' | '\r\n';

interface SourceLine {
  readonly text: string;
  ending: Ending | undefined;
}

/**
 * The file's new text after the chunks (the original's `derive_new_contents_from_chunks`).
 * With `preserveLineEndings` (the original's default) context lines stay exactly as in the file
 * (text and `\n` / `\r\n`) and added lines take the file's first line ending; otherwise the file
 * is split on `\n`, matched lines are replaced by the patch's lines and joined with `\n`. Either
 * way the result ends with a newline.
 */
export function deriveNewContents(
  original: string,
  path: string,
  chunks: readonly UpdateFileChunk[],
  preserveLineEndings: boolean,
): string {
  if (!preserveLineEndings) {
    const lines = original.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const out: string[] = [];
    let index = 0;
    for (const { start, oldLength, newLines } of computeReplacements(lines, path, chunks)) {
      for (; index < start && index < lines.length; index++) out.push(lines[index] as string);
      index = Math.max(index, start + oldLength);
      out.push(...newLines);
    }
    for (; index < lines.length; index++) out.push(lines[index] as string);
    if (out[out.length - 1] !== '') out.push('');
    return out.join('\n');
  }
  const source = parseSourceLines(original);
  const preferred: Ending = source.find((line) => line.ending !== undefined)?.ending ?? '\n';
  const replacements = computeReplacements(
    source.map((line) => line.text),
    path,
    chunks,
  );
  const out: SourceLine[] = [];
  let index = 0;
  for (const { start, oldLength, segment } of replacements) {
    for (; index < start && index < source.length; index++) out.push(source[index] as SourceLine);
    for (const line of segment) {
      if (typeof line === 'string') out.push({ text: line, ending: preferred });
      else out.push({ ...(source[start + line.keep] as SourceLine) });
    }
    index = Math.max(index, start + oldLength);
  }
  for (; index < source.length; index++) out.push(source[index] as SourceLine);
  let text = '';
  for (const line of out) {
    // Updates have always ended the file with a newline; an unterminated line moved inward gets one too.
    text += line.text + (line.ending ?? preferred);
  }
  return text;
}

function parseSourceLines(contents: string): SourceLine[] {
  const lines: SourceLine[] = [];
  let start = 0;
  for (let newline = contents.indexOf('\n'); newline !== -1; newline = contents.indexOf('\n', start)) {
    const raw = contents.slice(start, newline);
    lines.push(raw.endsWith('\r') ? { text: raw.slice(0, -1), ending: '\r\n' } : { text: raw, ending: '\n' });
    start = newline + 1;
  }
  if (start < contents.length) lines.push({ text: contents.slice(start), ending: undefined });
  return lines;
}
