// Characters a POSIX shell word may contain without quoting.
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument quoted for a POSIX shell, only when it needs it (`''` for an empty one). */
export function shlexQuote(word: string): string {
  if (word.length === 0) return "''";
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'"'"'`)}'`;
}

/**
 * An argv as one shell-readable line, as the original shows commands in error texts
 * (`shlex::try_join`). Quoting differs from the Rust crate's for words containing a single
 * quote (it switches to double quotes there); the result reads back to the same argv either way.
 */
export function shlexJoin(argv: readonly string[]): string {
  return argv.map(shlexQuote).join(' ');
}
