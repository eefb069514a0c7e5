import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExecPolicy } from './policy.ts';
import { RulesParser, RulesSyntaxError } from './rules-parser.ts';

/** The folder of rules files under a Codex home (`$CODEX_HOME/rules`, as the original). */
export const RULES_DIR_NAME = 'rules';
/** The file approved prefixes are appended to (`$CODEX_HOME/rules/default.rules`). */
export const DEFAULT_RULES_FILE = 'default.rules';
/** Only files with this extension are read. */
const RULES_EXTENSION = '.rules';

/** Where "always allow" amendments are written. */
export function defaultRulesPath(codexHome: string): string {
  return join(codexHome, RULES_DIR_NAME, DEFAULT_RULES_FILE);
}

/** A loaded policy, and the parse error that made it fall back to no rules. */
export interface LoadedRules {
  readonly policy: ExecPolicy;
  /** Set when a file could not be parsed (the policy is then empty, as the original does). */
  readonly warning?: RulesSyntaxError | undefined;
  /** The files read, in order. */
  readonly files: readonly string[];
}

/**
 * Loads every `*.rules` file of each folder's `rules/` subfolder (lowest precedence first, files
 * sorted by name), as the original's `load_exec_policy`. A missing folder has no rules; a file
 * that does not parse is reported in `warning` and the whole policy is empty (the original keeps
 * going with no user rules rather than failing the session). Read errors throw.
 */
export async function loadRules(configFolders: readonly string[]): Promise<LoadedRules> {
  const files: string[] = [];
  for (const folder of configFolders) {
    const dir = join(folder, RULES_DIR_NAME);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    files.push(
      ...entries
        .filter((entry) => entry.isFile() && entry.name.endsWith(RULES_EXTENSION))
        .map((entry) => join(dir, entry.name))
        .sort(),
    );
  }
  const parser = new RulesParser();
  try {
    for (const file of files) parser.parse(file, await readFile(file, 'utf8'));
  } catch (error) {
    if (error instanceof RulesSyntaxError) {
      return { policy: new ExecPolicy(), warning: error, files };
    }
    throw error;
  }
  return { policy: parser.build(), files };
}

/** The line the original appends for an approved prefix (tokens JSON-quoted). */
export function allowPrefixRuleLine(prefix: readonly string[]): string {
  if (prefix.length === 0) throw new RangeError('prefix rule requires at least one token');
  return `prefix_rule(pattern=[${prefix.map((token) => JSON.stringify(token)).join(', ')}], decision="allow")`;
}

// Appends in this process are serialised (the original takes an advisory file lock).
let appending: Promise<unknown> = Promise.resolve();

/**
 * Appends `prefix_rule(pattern=[…], decision="allow")` to `rulesPath` unless that exact line is
 * already there (the original's `blocking_append_allow_prefix_rule`): creates the `rules`
 * folder (not its parents), adds a newline first when the file does not end with one.
 */
export function appendAllowPrefixRule(rulesPath: string, prefix: readonly string[]): Promise<void> {
  const line = allowPrefixRuleLine(prefix);
  const task = appending.then(async () => {
    const dir = dirname(rulesPath);
    try {
      await mkdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const file = await open(rulesPath, 'a+');
    try {
      const contents = await file.readFile('utf8');
      if (contents.split('\n').some((existing) => existing === line)) return;
      const separator = contents.length > 0 && !contents.endsWith('\n') ? '\n' : '';
      await file.appendFile(`${separator}${line}\n`);
    } finally {
      await file.close();
    }
  });
  appending = task.catch(() => undefined);
  return task;
}
