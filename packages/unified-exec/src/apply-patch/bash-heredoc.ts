import { Parser, Query } from 'web-tree-sitter';
import { loadBashLanguage } from '../internal/bash-grammar.ts';

/**
 * Longest script searched for an apply_patch heredoc. Far above any real patch; a bigger script
 * runs as a normal command.
 */
export const MAX_HEREDOC_SCRIPT_CHARS: number = 16 * 1024 * 1024;

// The original's query: the whole script is one heredoc-redirected statement, either
// `apply_patch <<EOF …` or `cd <one word or quoted path> && apply_patch <<EOF …`.
const APPLY_PATCH_QUERY = `
(
  program
    . (redirected_statement
        body: (command
                name: (command_name (word) @apply_name) .)
        (#any-of? @apply_name "apply_patch" "applypatch")
        redirect: (heredoc_redirect
                    . (heredoc_start)
                    . (heredoc_body) @heredoc
                    . (heredoc_end)
                    .))
    .)

(
  program
    . (redirected_statement
        body: (list
                . (command
                    name: (command_name (word) @cd_name) .
                    argument: [
                      (word) @cd_path
                      (string (string_content) @cd_path)
                      (raw_string) @cd_raw_string
                    ] .)
                "&&"
                . (command
                    name: (command_name (word) @apply_name))
                .)
        (#eq? @cd_name "cd")
        (#any-of? @apply_name "apply_patch" "applypatch")
        redirect: (heredoc_redirect
                    . (heredoc_start)
                    . (heredoc_body) @heredoc
                    . (heredoc_end)
                    .))
    .)
`;

/** The patch text of an apply_patch heredoc script and the `cd` folder before it, if any. */
export interface ApplyPatchHeredoc {
  readonly body: string;
  readonly workdir: string | undefined;
}

interface Loaded {
  readonly parser: Parser;
  readonly query: Query;
}

let loading: Promise<Loaded> | undefined;

function load(): Promise<Loaded> {
  loading ??= (async () => {
    const language = await loadBashLanguage();
    const parser = new Parser();
    parser.setLanguage(language);
    return { parser, query: new Query(language, APPLY_PATCH_QUERY) };
  })();
  // A failed load is not cached: the next call tries again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/**
 * The heredoc of a script that is exactly `apply_patch <<'EOF' … EOF` (or `applypatch`,
 * optionally after `cd DIR &&`), parsed with tree-sitter-bash as the original does; undefined
 * for any other script. The body loses its trailing newlines.
 */
export async function extractApplyPatchHeredoc(script: string): Promise<ApplyPatchHeredoc | undefined> {
  // Cheap pre-check: the query needs the command name in the text.
  if (script.length > MAX_HEREDOC_SCRIPT_CHARS || !/apply_?patch/.test(script)) return undefined;
  const { parser, query } = await load();
  const tree = parser.parse(script);
  if (tree === null) return undefined;
  try {
    for (const match of query.matches(tree.rootNode)) {
      let body: string | undefined;
      let workdir: string | undefined;
      for (const capture of match.captures) {
        if (capture.name === 'heredoc') body = capture.node.text.replace(/\n+$/, '');
        else if (capture.name === 'cd_path') workdir = capture.node.text;
        else if (capture.name === 'cd_raw_string') {
          const raw = capture.node.text;
          workdir = raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'") ? raw.slice(1, -1) : raw;
        }
      }
      if (body !== undefined) return { body, workdir };
    }
    return undefined;
  } finally {
    tree.delete();
  }
}
