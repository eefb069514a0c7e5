/**
 * A float as the original's argument errors print it (`floating point `…``): the shortest
 * round-trip digits, `.0` added to whole numbers, exponent form (`1e+16`, `1e-7`) at or above
 * 1e16 and below 1e-6. Observed on the live peer; see test/oracle/fixtures/args-numbers.json.
 */
export function formatRustFloat(value: number): string {
  if (Object.is(value, -0)) return '-0.0';
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'inf' : '-inf';
  const magnitude = Math.abs(value);
  const text = magnitude >= 1e16 ? value.toExponential() : String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/** A string quoted and escaped like Rust's `{:?}` (quotes, backslashes, controls). */
export function rustDebugString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (char === '\0') out += '\\0';
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || isUnprintableFormat(code)) {
      out += `\\u{${code.toString(16)}}`;
    } else out += char;
  }
  return `${out}"`;
}

/** Format and separator characters Rust's Debug escapes (a common subset of its tables). */
function isUnprintableFormat(code: number): boolean {
  return (
    code === 0xad ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2064) ||
    code === 0xfeff ||
    (code >= 0xd800 && code <= 0xdfff)
  );
}
