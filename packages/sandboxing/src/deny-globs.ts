import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { readdir, realpath } from './internal/fs-calls.ts';

/** Most paths a policy's deny globs may expand to (one mask each), as the original's limit. */
export const DENY_GLOB_MAX_MATCHES = 8192;
/** Most directories read while expanding a policy's deny globs; beyond it the launch is refused (fail closed). */
export const DENY_GLOB_MAX_DIRS = 20_000;

const META = /[*?[\]]/;

function escapeRegex(text: string): string {
  return text.replace(/[.+^${}()|\\/-]/g, '\\$&');
}

const compiled = new Map<string, RegExp>();

/**
 * The regular expression of a glob as the original's deny-read check reads it (`glob::Pattern`
 * with default options): `*` and `**` match any run of characters, `/` included (a `**`
 * followed by a slash also matches no folder at all); `?` one
 * character; `[...]` a class (`[!...]` negated); an unclosed `[` is literal.
 */
function globRegex(pattern: string): RegExp {
  const cached = compiled.get(pattern);
  if (cached !== undefined) return cached;
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') {
      let stars = 1;
      while (pattern[i + 1] === '*') {
        i++;
        stars++;
      }
      // `**/` also matches no folder at all (`a/**/b` matches `a/b`).
      if (stars > 1 && pattern[i + 1] === '/' && (i - stars < 0 || pattern[i - stars] === '/')) {
        i++;
        source += '(?:.*/)?';
      } else source += '.*';
    } else if (ch === '?') {
      source += '.';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        source += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\\^\]]/g, '\\$&')}]`;
      i = end;
    } else {
      source += escapeRegex(ch);
    }
  }
  const regex = new RegExp(`^${source}$`, 's');
  if (compiled.size > 1024) compiled.clear();
  compiled.set(pattern, regex);
  return regex;
}

/** True when the absolute `path` matches the absolute deny glob `pattern`. */
export function matchesDenyGlob(pattern: string, path: string): boolean {
  return globRegex(pattern).test(path);
}

/** The folder to scan for a pattern: its fixed part up to the last `/` before the first metacharacter. */
function searchRoot(pattern: string): string | undefined {
  const first = pattern.search(META);
  if (first < 0) return undefined;
  const cut = pattern.lastIndexOf('/', first);
  // A scan from `/` is too broad to run at every launch (the original skips it too).
  if (cut <= 0) return undefined;
  return pattern.slice(0, cut);
}

/**
 * The existing paths the deny globs match now, for masking at launch: each pattern is scanned
 * below its fixed prefix, at most `maxDepth` levels down, without following symlinked folders;
 * a matching symlink adds its target too. A pattern without a metacharacter names one path
 * (returned as is). Throws `invalidParams` past {@link DENY_GLOB_MAX_MATCHES} matches or
 * {@link DENY_GLOB_MAX_DIRS} folders: a deny rule that cannot be enforced must not be dropped.
 */
export async function expandDenyGlobs(patterns: readonly string[], maxDepth: number): Promise<string[]> {
  const found = new Set<string>();
  const budget = { dirs: DENY_GLOB_MAX_DIRS };
  const add = async (path: string, isLink: boolean): Promise<void> => {
    found.add(path);
    if (isLink) {
      const target = await realpath(path).catch(() => undefined);
      if (target !== undefined) found.add(target);
    }
    if (found.size > DENY_GLOB_MAX_MATCHES)
      throw new ExecError(
        'invalidParams',
        `sandbox deny globs match more than ${DENY_GLOB_MAX_MATCHES} paths`,
      );
  };
  for (const pattern of patterns) {
    if (!META.test(pattern)) {
      found.add(pattern);
      continue;
    }
    const root = searchRoot(pattern);
    if (root === undefined) continue;
    const regex = globRegex(pattern);
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > maxDepth) return;
      if (--budget.dirs < 0)
        throw new ExecError(
          'invalidParams',
          `sandbox deny glob ${JSON.stringify(pattern)}: more than ${DENY_GLOB_MAX_DIRS} folders to scan`,
        );
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        // A matching folder is masked whole: nothing below it needs a mask of its own.
        if (regex.test(path)) await add(path, entry.isSymbolicLink());
        else if (entry.isDirectory()) await walk(path, depth + 1);
      }
    };
    await walk(root, 1);
  }
  return [...found];
}
