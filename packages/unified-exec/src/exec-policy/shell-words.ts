/**
 * Splits a line into words as a POSIX shell would without expanding anything (Rust's
 * `shlex::split`): quotes group, backslash escapes, `#` at a word start begins a comment.
 * Undefined for an unterminated quote or a trailing backslash.
 */
export function splitShellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
      i++;
    } else if (c === '#' && word === undefined) {
      while (i < line.length && line[i] !== '\n') i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) return undefined;
      word = (word ?? '') + line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      word ??= '';
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        const d = line[i] as string;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '$`"\\\n'.includes(line[i + 1] as string)) {
          if (line[i + 1] !== '\n') word += line[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return undefined;
      if (line[i + 1] !== '\n') word = (word ?? '') + line[i + 1];
      i += 2;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
