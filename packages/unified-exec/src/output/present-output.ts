import { DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS } from '@execd/pty-utils';
import type { SecretMasker } from './secret-mask.ts';
import { hasRedrawSequences, renderTerminalText, type TerminalSize } from './terminal-render.ts';
import { decodeUtf8Lossy, encodeUtf8 } from './utf8.ts';

/**
 * The execd additions to what a tool result shows of a command's output (all off by default, so
 * results are the original's): tty output that redraws is rendered as its final screen, and
 * secrets are masked.
 */
export interface OutputPresentation {
  /**
   * Render tty output containing redraw sequences (carriage-return rewrites, cursor movement,
   * erasing, the alternate screen) through a headless terminal and show the resulting text.
   * `true`: at the session's size (the PTY's 80x24).
   */
  readonly renderTerminal?: boolean | TerminalSize | undefined;
  /** Mask secrets (see {@link SecretMasker}). */
  readonly secrets?: SecretMasker | undefined;
}

/** The outcome of {@link presentOutputBytes}. */
export interface PresentedOutput {
  /** The bytes to show: the input itself when nothing changed. */
  readonly bytes: Uint8Array;
  /** Secrets masked in them. */
  readonly maskedSecrets: number;
  /** True when the output was rendered through the terminal emulator. */
  readonly rendered: boolean;
}

/**
 * Applies `presentation` to the assembled output of one call (render first, so a secret drawn in
 * pieces is masked whole, then mask). Output that needs neither passes through byte for byte.
 */
export async function presentOutputBytes(
  bytes: Uint8Array,
  options: { readonly tty: boolean; readonly presentation: OutputPresentation },
): Promise<PresentedOutput> {
  const { presentation } = options;
  const render = options.tty ? presentation.renderTerminal : undefined;
  if ((render === undefined || render === false) && presentation.secrets === undefined) {
    return { bytes, maskedSecrets: 0, rendered: false };
  }
  const original = decodeUtf8Lossy(bytes);
  let text = original;
  let rendered = false;
  if (render !== undefined && render !== false && hasRedrawSequences(text)) {
    const size = render === true ? { cols: DEFAULT_PTY_COLS, rows: DEFAULT_PTY_ROWS } : render;
    text = await renderTerminalText(text, size);
    rendered = true;
  }
  const masked = presentation.secrets?.mask(text) ?? { text, masked: 0 };
  if (!rendered && masked.masked === 0) return { bytes, maskedSecrets: 0, rendered: false };
  return { bytes: encodeUtf8(masked.text), maskedSecrets: masked.masked, rendered };
}
