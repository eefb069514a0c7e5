import { type Node, Parser } from 'web-tree-sitter';
import { loadBashLanguage } from '../internal/bash-grammar.ts';

/**
 * Longest script the parser is asked about. Longer scripts are "not provably simple" (every
 * decision falls back to the whole argv); tree-sitter is linear, but the walk below keeps every
 * node of the tree, and a model-chosen megabyte of script has no business being auto-approved.
 */
export const MAX_PARSED_SCRIPT_CHARS: number = 64 * 1024;

// Named node kinds a "word only commands sequence" may contain (the original's ALLOWED_KINDS).
const PLAIN_KINDS = new Set([
  'program',
  'list',
  'pipeline',
  'command',
  'command_name',
  'word',
  'string',
  'string_content',
  'raw_string',
  'number',
  'concatenation',
]);
// Anonymous tokens allowed between those: the safe operators and quotes.
const PLAIN_PUNCTUATION = new Set(['&&', '||', ';', '|', '"', "'"]);
// What may sit around the one command of a here-doc script.
const HEREDOC_ATTACHMENTS = new Set([
  'heredoc_body',
  'simple_heredoc_body',
  'heredoc_redirect',
  'herestring_redirect',
  'redirected_statement',
]);

/** What the exec policy asks of a shell parser (undefined: not provably that shape). */
export interface ShellScriptParser {
  plainCommands(script: string): string[][] | undefined;
  heredocCommand(script: string): string[] | undefined;
  literalCommands(script: string): string[][] | undefined;
}

/**
 * The parser used when tree-sitter cannot be loaded: no script is provably plain, so every
 * `bash -lc` command is judged as its whole argv (no known-safe auto-approval, no rules per
 * simple command, no dangerous-command detection inside scripts).
 */
export const UNPARSED_SCRIPTS: ShellScriptParser = Object.freeze({
  plainCommands: () => undefined,
  heredocCommand: () => undefined,
  literalCommands: () => undefined,
});

/**
 * Bash scripts parsed with tree-sitter-bash (the grammar the original uses), reduced to the
 * argv of each simple command when the script is provably plain. Parsing is synchronous once
 * {@link loadBashParser} resolved.
 */
export class BashParser implements ShellScriptParser {
  readonly #parser: Parser;

  /** @internal Use {@link loadBashParser}. */
  constructor(parser: Parser) {
    this.#parser = parser;
  }

  /**
   * The commands of a script made only of plain words joined by `&&`, `||`, `;` and `|` (the
   * original's `parse_plain_shell_script`); undefined for anything else: substitutions,
   * expansions, redirections, subshells, control flow, assignments, syntax errors.
   */
  plainCommands(script: string): string[][] | undefined {
    return this.#withTree(script, (root) => {
      if (root.hasError) return undefined;
      const commands: Node[] = [];
      const stack: Node[] = [root];
      for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
        const kind = node.type;
        if (node.isNamed) {
          if (!PLAIN_KINDS.has(kind)) return undefined;
          if (kind === 'command') commands.push(node);
        } else if (!PLAIN_PUNCTUATION.has(kind) && kind.trim().length > 0) {
          return undefined;
        }
        for (const child of node.children) if (child !== null) stack.push(child);
      }
      commands.sort((a, b) => a.startIndex - b.startIndex);
      const result: string[][] = [];
      for (const command of commands) {
        const words = plainCommandWords(command);
        if (words === undefined) return undefined;
        result.push(words);
      }
      return result;
    });
  }

  /**
   * The argv of the single command of a here-doc script such as `cat <<EOF … EOF` (the
   * original's `parse_shell_lc_single_command_prefix`): literal words only, no file redirect.
   */
  heredocCommand(script: string): string[] | undefined {
    return this.#withTree(script, (root) => {
      if (root.hasError) return undefined;
      if (!hasDescendant(root, 'heredoc_redirect') || hasDescendant(root, 'file_redirect')) return undefined;
      let single: Node | undefined;
      const stack: Node[] = [root];
      for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
        if (node.type === 'command') {
          if (single !== undefined) return undefined;
          single = node;
        }
        for (const child of node.namedChildren) if (child !== null) stack.push(child);
      }
      return single === undefined ? undefined : heredocCommandWords(single);
    });
  }

  /**
   * Every command whose name and arguments are literal, wherever it sits (pipelines, control
   * flow, substitutions): what the dangerous-command check looks at.
   */
  literalCommands(script: string): string[][] | undefined {
    return this.#withTree(script, (root) => {
      const result: string[][] = [];
      const stack: Node[] = [root];
      for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
        if (node.type === 'command' && !node.hasError) {
          const words = literalCommandWords(node);
          if (words !== undefined) result.push(words);
        }
        for (const child of node.namedChildren) if (child !== null) stack.push(child);
      }
      return result;
    });
  }

  #withTree<T>(script: string, read: (root: Node) => T | undefined): T | undefined {
    if (script.length > MAX_PARSED_SCRIPT_CHARS) return undefined;
    const tree = this.#parser.parse(script);
    if (tree === null) return undefined;
    try {
      return read(tree.rootNode);
    } finally {
      tree.delete();
    }
  }
}

function plainCommandWords(command: Node): string[] | undefined {
  const words: string[] = [];
  for (const child of command.namedChildren) {
    if (child === null) continue;
    switch (child.type) {
      case 'command_name': {
        const word = child.namedChild(0);
        if (word === null || word.type !== 'word') return undefined;
        words.push(word.text);
        break;
      }
      case 'word':
      case 'number':
        words.push(child.text);
        break;
      case 'string':
      case 'raw_string': {
        const text = quotedText(child);
        if (text === undefined) return undefined;
        words.push(text);
        break;
      }
      case 'concatenation': {
        let joined = '';
        for (const part of child.namedChildren) {
          if (part === null) continue;
          if (part.type === 'word' || part.type === 'number') joined += part.text;
          else if (part.type === 'string' || part.type === 'raw_string') {
            const text = quotedText(part);
            if (text === undefined) return undefined;
            joined += text;
          } else return undefined;
        }
        if (joined.length === 0) return undefined;
        words.push(joined);
        break;
      }
      default:
        return undefined;
    }
  }
  return words;
}

// A command with a literal name; arguments that are not plain keep their source text (a flag
// such as `-rf` is literal either way, and `"$TARGET"` never looks like one).
function literalCommandWords(command: Node): string[] | undefined {
  const name = command.childForFieldName('name');
  const word = name?.namedChild(0);
  if (word === null || word === undefined || word.type !== 'word') return undefined;
  const words = [word.text];
  for (const argument of command.childrenForFieldName('argument')) {
    if (argument === null) continue;
    const single = argument.type === 'word' || argument.type === 'number' ? argument.text : undefined;
    const quoted =
      argument.type === 'string' || argument.type === 'raw_string' ? quotedText(argument) : undefined;
    words.push(single ?? quoted ?? argument.text);
  }
  return words;
}

/** The content of `"…"` without expansions, or of `'…'`. */
function quotedText(node: Node): string | undefined {
  const text = node.text;
  if (node.type === 'string') {
    if (node.namedChildren.some((part) => part !== null && part.type !== 'string_content')) return undefined;
    return text.startsWith('"') && text.endsWith('"') && text.length >= 2 ? text.slice(1, -1) : undefined;
  }
  return text.startsWith("'") && text.endsWith("'") && text.length >= 2 ? text.slice(1, -1) : undefined;
}

function heredocCommandWords(command: Node): string[] | undefined {
  const words: string[] = [];
  for (const child of command.namedChildren) {
    if (child === null) continue;
    const kind = child.type;
    if (kind === 'command_name') {
      const word = child.namedChild(0);
      if (word === null || !isLiteralWord(word)) return undefined;
      words.push(word.text);
    } else if (kind === 'word' || kind === 'number') {
      if (!isLiteralWord(child)) return undefined;
      words.push(child.text);
    } else if (kind !== 'comment' && !HEREDOC_ATTACHMENTS.has(kind)) {
      return undefined;
    }
  }
  return words.length > 0 ? words : undefined;
}

function isLiteralWord(node: Node): boolean {
  return (node.type === 'word' || node.type === 'number') && node.namedChildCount === 0;
}

function hasDescendant(root: Node, kind: string): boolean {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === kind) return true;
    for (const child of node.namedChildren) if (child !== null) stack.push(child);
  }
  return false;
}

let loading: Promise<BashParser> | undefined;

/**
 * The shared parser: web-tree-sitter's runtime and the tree-sitter-bash grammar (its prebuilt
 * wasm) are loaded once per process, asynchronously; later calls get the same parser.
 */
export function loadBashParser(): Promise<BashParser> {
  loading ??= (async () => {
    // The runtime must be initialised (by the language load) before a Parser is made.
    const language = await loadBashLanguage();
    const parser = new Parser();
    parser.setLanguage(language);
    return new BashParser(parser);
  })();
  // A failed load is not cached: the next call tries again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
