// Case-insensitive wildmatch for environment variable names, as the original's
// `WildMatchPattern<'*', '?'>`: `*` matches any run of characters (including none), `?` exactly
// one; every other character is literal.

/** A compiled name pattern: `matches(name)` is case-insensitive. */
export interface EnvPattern {
  /** The pattern text as given. */
  readonly source: string;
  matches(name: string): boolean;
}

/** Compiles a `*`/`?` pattern into a case-insensitive matcher. */
export function compileEnvPattern(source: string): EnvPattern {
  let body = '';
  for (const char of source) {
    if (char === '*') body += '[\\s\\S]*';
    else if (char === '?') body += '[\\s\\S]';
    else body += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  const regex = new RegExp(`^${body}$`, 'iu');
  return { source, matches: (name) => regex.test(name) };
}

/** True when `name` matches any of `patterns`. */
export function matchesAny(patterns: readonly EnvPattern[], name: string): boolean {
  return patterns.some((pattern) => pattern.matches(name));
}
