/**
 * Decodes the escapes a person types for write_stdin: `\n`, `\r`, `\t`, `\e`, `\\`, `\xHH`
 * (so `\x03` is Ctrl-C and `\x04` Ctrl-D) and `\uHHHH`. Anything else is kept as typed.
 */
export function decodeEscapes(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[nrte\\])/g, (_whole, code: string) => {
    switch (code[0]) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'e':
        return '\u001b';
      case '\\':
        return '\\';
      default:
        return String.fromCharCode(Number.parseInt(code.slice(1), 16));
    }
  });
}
