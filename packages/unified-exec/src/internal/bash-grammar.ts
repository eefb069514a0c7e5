import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

let loading: Promise<Language> | undefined;

/**
 * The tree-sitter-bash grammar (its prebuilt wasm) on web-tree-sitter's runtime, loaded once per
 * process and shared by the exec policy's script splitter and apply_patch's heredoc detection. (One
 * grammar instance matters: two compiled copies of its huge lexer cost a second of CPU.)
 */
export function loadBashLanguage(): Promise<Language> {
  loading ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    const wasm = await readFile(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    return Language.load(new Uint8Array(wasm));
  })();
  // A failed load is not cached: the next call tries again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
