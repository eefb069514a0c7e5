import { SNAPSHOT_MARKER } from './capture-script.ts';
import type { CaptureSections } from './parse-capture.ts';
import type { SnapshotShell } from './shell-kind.ts';

/**
 * `set -o` options never restored (bash, sh): each would change how every later command runs in
 * a way the user's interactive shell does not (`onecmd` makes `bash -c` stop after one command and
 * print nothing, a known snapshot failure), or describes how the capture shell was started.
 */
export const STRIPPED_SET_OPTIONS: ReadonlySet<string> = new Set([
  'onecmd',
  'errexit',
  'nounset',
  'xtrace',
  'verbose',
  'noexec',
  'monitor',
  'privileged',
  'interactive',
  'stdin',
  'debug',
]);

/**
 * zsh options never restored, in `setopt` spelling (lowercase, no underscores, `no` prefix for a
 * default-on option that is off): the same hazards as `STRIPPED_SET_OPTIONS`, plus the options
 * that describe the capture shell's invocation (`login`, `rcs`, …).
 */
export const STRIPPED_ZSH_OPTIONS: ReadonlySet<string> = new Set([
  'errexit',
  'errreturn',
  'nounset',
  'xtrace',
  'verbose',
  'noexec',
  'singlecommand',
  'monitor',
  'login',
  'interactive',
  'shinstdin',
  'privileged',
  'restricted',
  'rcs',
  'norcs',
  'globalrcs',
  'noglobalrcs',
  'zle',
]);

const OPTION_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * Turns the captured sections into the restore script: options first, functions last in bash and
 * sh, so a profile function named `set` or `alias` cannot hijack the restore itself. zsh defines
 * functions before aliases because its function bodies were alias-expanded when first defined.
 * Aliases are defined but, as in the original, bash keeps `expand_aliases` off under `-c` (an
 * interactive `alias rm='rm -i'` must not make an agent's `rm` silently answer "no"), and zsh
 * parses the whole `-c` string before the restore runs, so only dash expands them in the command.
 */
export function renderState(shell: SnapshotShell, sections: CaptureSections): string {
  const options = shell === 'zsh' ? zshOptions(sections.options) : setOptions(sections.options);
  const aliases = shell === 'sh' ? shAliases(sections.aliases) : terminated(sections.aliases);
  const functions = terminated(sections.functions);
  const header = `${SNAPSHOT_MARKER}\n`;
  switch (shell) {
    case 'zsh':
      return header + options + functions + aliases;
    case 'bash':
    case 'sh':
      return header + options + aliases + functions;
  }
}

/** `set +o` lines (`set -o name` = on) -> `set -o name` for each safe option that is on. */
function setOptions(text: string): string {
  let out = '';
  for (const line of text.split('\n')) {
    const match = /^set -o (\S+)$/.exec(line.trim());
    const name = match?.[1];
    if (name === undefined || !OPTION_NAME.test(name) || STRIPPED_SET_OPTIONS.has(name)) continue;
    out += `set -o ${name}\n`;
  }
  return out;
}

/** `setopt` lines (one name each; `name on` under KSH_OPTION_PRINT) -> `setopt name`. */
function zshOptions(text: string): string {
  let out = '';
  for (const line of text.split('\n')) {
    const [name, state, extra] = line.trim().split(/\s+/);
    if (name === undefined || name === '' || extra !== undefined) continue;
    if (state !== undefined && state !== 'on') continue;
    if (!OPTION_NAME.test(name) || STRIPPED_ZSH_OPTIONS.has(name.toLowerCase().replaceAll('_', ''))) continue;
    out += `setopt ${name}\n`;
  }
  return out;
}

/**
 * POSIX `alias` output -> `alias name=value` commands. dash prints `name='value'` without the
 * `alias` word, and a value may span lines, so records are split on newlines outside quotes.
 */
function shAliases(text: string): string {
  let out = '';
  for (const record of splitRecords(text)) {
    const trimmed = record.trimStart();
    if (trimmed.startsWith('alias ')) out += terminated(trimmed);
    else if (/^[^\s='"]+=/.test(trimmed)) out += terminated(`alias ${trimmed}`);
  }
  return out;
}

function splitRecords(text: string): string[] {
  const records: string[] = [];
  let current = '';
  let quote: "'" | '"' | undefined;
  let escaped = false;
  for (const ch of text) {
    current += ch;
    if (escaped) escaped = false;
    else if (quote === "'") quote = ch === "'" ? undefined : quote;
    else if (ch === '\\') escaped = true;
    else if (quote === '"') quote = ch === '"' ? undefined : quote;
    else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '\n') {
      records.push(current);
      current = '';
    }
  }
  if (current.trim() !== '') records.push(current);
  return records;
}

function terminated(text: string): string {
  if (text.trim() === '') return '';
  return text.endsWith('\n') ? text : `${text}\n`;
}
