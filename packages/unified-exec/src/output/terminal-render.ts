import xtermHeadless from '@xterm/headless';

// The package is CommonJS: its named exports are only reachable through the default import.
const { Terminal } = xtermHeadless;

/**
 * Most lines kept by the emulator (its scrollback plus the screen). The tool result keeps at most
 * about 10,000 tokens of output anyway; a redrawing command longer than this loses its oldest
 * lines, the ones truncation would drop first.
 */
export const RENDER_MAX_LINES = 20_000;

/**
 * Sequences that redraw what a terminal shows, as opposed to only appending to it: a carriage
 * return not followed by a line feed, a backspace, cursor movement and positioning (CSI A-H, d,
 * f, s, u, ESC 7/8, reverse index), erasing and inserting/deleting (CSI J, K, L, M, P, X, @), a
 * scroll region (CSI r), and the alternate screen (CSI ?47/?1047/?1049 h). Colours and other
 * attributes (CSI m) are not redraws.
 */
const REDRAW = new RegExp(
  [
    '\\r(?!\\n|$)',
    '\\x08',
    '\\x1b\\[[0-9;]*[A-HJKLMPSTXdfrsu@]',
    '\\x1b\\[\\?(?:47|1047|1049)h',
    '\\x1b[78M]',
  ].join('|'),
);

/** True when `text` contains a sequence that redraws the terminal (see {@link renderTerminalText}). */
export function hasRedrawSequences(text: string): boolean {
  return REDRAW.test(text);
}

/** Size of the terminal the output was written to. */
export interface TerminalSize {
  readonly cols: number;
  readonly rows: number;
}

type Buffer = InstanceType<typeof Terminal>['buffer']['active'];

/** The text of rows `[0, end)` of a buffer; wrapped rows are joined to their line. */
function bufferText(buffer: Buffer, end: number, cursor?: { row: number; col: number }): string[] {
  const lines: string[] = [];
  for (let row = 0; row < end; row++) {
    const line = buffer.getLine(row);
    if (line === undefined) continue;
    // Written blanks count as content for xterm's own trimming: trim them here.
    let text = line.translateToString(true).trimEnd();
    // Keep the blanks up to the cursor on its row: a prompt's trailing space is part of it.
    if (cursor !== undefined && row === cursor.row && cursor.col > text.length) {
      text = line.translateToString(false, 0, cursor.col);
    }
    if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines;
}

/** The last row of `buffer` that has text, or -1. */
function lastContentRow(buffer: Buffer): number {
  for (let row = buffer.length - 1; row >= 0; row--) {
    if ((buffer.getLine(row)?.translateToString(true).trimEnd().length ?? 0) > 0) return row;
  }
  return -1;
}

/**
 * What a terminal of `size` shows after `text` was written to a fresh one: the scrollback and the
 * screen as plain lines (`\n`-separated, trailing blanks trimmed), so 200 rewrites of a progress
 * line read as its final state. A program still on the alternate screen (a full-screen program)
 * shows the normal screen's lines, then the alternate screen. Colours are dropped.
 */
export async function renderTerminalText(text: string, size: TerminalSize): Promise<string> {
  const newlines = text.split('\n').length;
  const terminal = new Terminal({
    cols: size.cols,
    rows: size.rows,
    scrollback: Math.min(newlines + size.rows, RENDER_MAX_LINES),
    allowProposedApi: true,
    // A raw `\n` from the program moves down only, as on a real tty without `onlcr` output.
    convertEol: false,
  });
  try {
    await new Promise<void>((resolve) => terminal.write(text, resolve));
    const normal = terminal.buffer.normal;
    const active = terminal.buffer.active;
    const normalCursor = { row: normal.baseY + normal.cursorY, col: normal.cursorX };
    if (active.type === 'alternate') {
      const before = bufferText(normal, lastContentRow(normal) + 1);
      const screen = bufferText(active, lastContentRow(active) + 1);
      return [...before, ...screen].join('\n');
    }
    const end = Math.max(lastContentRow(normal), normalCursor.row) + 1;
    return bufferText(normal, end, normalCursor).join('\n');
  } finally {
    terminal.dispose();
  }
}
