/**
 * Characters that can change how text shown to a person looks without showing themselves:
 * controls (C0 with ESC, CR, backspace, newline and tab; DEL; C1), format characters (bidi
 * embeddings, overrides and isolates, LRM/RLM/ALM, zero-width space/joiners, word joiner,
 * BOM, soft hyphen, tag characters), line and paragraph separators, lone surrogates, and the
 * invisible letters and marks that render as nothing (combining grapheme joiner, Hangul
 * fillers, Khmer inherent vowels, variation selectors).
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115f\u1160\u3164\uffa0]|\u034f|\u17b4|\u17b5|[\ufe00-\ufe0f]|[\u{e0100}-\u{e01ef}]/gu;

/** The same, with `\r\n` matched as one unit (kept by `keepLineBreaks`). */
const LINE_BREAK_OR_INVISIBLE = new RegExp(`\r\n|${INVISIBLE.source}`, 'gu');

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) as number;
  const hex = code.toString(16);
  if (code <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\u{${hex}}`;
}

/** Options of {@link visibleText}. */
export interface VisibleTextOptions {
  /**
   * Keep `\n`, `\t` and `\r\n` as they are (for multi-line output printed on a terminal); a lone
   * `\r` is still escaped. Default false: one line, everything escaped (approval prompts).
   */
  readonly keepLineBreaks?: boolean | undefined;
}

/**
 * Text the model chose (a command, a justification, a cwd, a host), made safe to show a person
 * who approves it: every character that could hide or rearrange what is displayed (see
 * {@link INVISIBLE}) is replaced by a visible escape (`\x1b`, `\r`, `\n`, `\u202e`,
 * `\u{e0041}`); everything else is kept. Backslashes are kept as they are, so the result reads
 * like the command, and a literal `\x1b` looks like an escaped ESC: neither hides anything.
 */
export function visibleText(text: string, options: VisibleTextOptions = {}): string {
  if (options.keepLineBreaks !== true) return text.replace(INVISIBLE, escapeChar);
  return text.replace(LINE_BREAK_OR_INVISIBLE, (char) =>
    char === '\n' || char === '\t' || char === '\r\n' ? char : escapeChar(char),
  );
}

/**
 * A JSON text with the same characters written as JSON `\uXXXX` escapes (astral ones as a
 * surrogate pair), for log lines a person reads on a terminal. `JSON.stringify` already escapes
 * C0 controls and lone surrogates, but not DEL, C1, bidi or separators. Still valid JSON that
 * parses to the same value: these characters only ever occur inside strings.
 */
export function visibleJson(json: string): string {
  return json.replace(INVISIBLE, (char) => {
    let out = '';
    for (let index = 0; index < char.length; index++) {
      out += `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`;
    }
    return out;
  });
}
