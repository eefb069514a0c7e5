// The published bundle must run in browsers: no `node:` imports, no Node builtins, nothing but the
// declared dependencies (which must themselves be free of Node imports). Reads the built
// `dist/index.js` and `dist/contract/index.js` (`npm test` builds first; locally:
// `pnpm exec turbo run build --filter=@execd/protocol`).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = join(PACKAGE_DIR, 'dist', 'index.js');
/** Every entry of the exports map: the root and `./contract`. */
const ENTRIES = [BUNDLE, join(PACKAGE_DIR, 'dist', 'contract', 'index.js')];
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
/** What the bundles may import: dependencies and peers (valibot is a peer: users share it). */
const DECLARED = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies ?? {})];
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/** Every module specifier a JS module's text imports, re-exports, dynamically imports or requires. */
function specifiers(source: string): string[] {
  const patterns = [
    /\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?["']([^"']+)["']/g,
    /\bexport\s*[\w*{}\s,$]*\s*from\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  return patterns.flatMap((pattern) => Array.from(source.matchAll(pattern), (match) => match[1]!));
}

/** Walks a module and its relative imports, returning every bare specifier met. */
function bareImports(entry: string): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  }
  return bare;
}

describe('dist/index.js and dist/contract/index.js', () => {
  test('exist (built before the tests run)', () => {
    for (const entry of ENTRIES)
      expect(existsSync(entry), `${entry} is missing: build the package first`).toBe(true);
  });

  test('import only their declared dependencies, and no Node builtin', () => {
    for (const entry of ENTRIES) {
      const imports = bareImports(entry);
      if (entry === BUNDLE) expect(imports.size).toBeGreaterThan(0);
      for (const specifier of imports) {
        expect(NODE_BUILTINS.has(specifier), `imports Node builtin ${specifier}`).toBe(false);
        expect(DECLARED, `imports undeclared ${specifier}`).toContain(specifier);
      }
      expect(readFileSync(entry, 'utf8')).not.toMatch(/["']node:/);
    }
  });

  test('its dependencies import no Node builtin either', () => {
    for (const dependency of DECLARED) {
      // The ESM entry a bundler would use for a browser build.
      const entry = esmEntry(realpathSync(join(PACKAGE_DIR, 'node_modules', dependency, 'package.json')));
      for (const specifier of bareImports(entry)) {
        expect(NODE_BUILTINS.has(specifier), `${dependency} imports ${specifier}`).toBe(false);
      }
    }
  });

  test('works with no Node Buffer in sight (the portable base64 path)', () => {
    const script = `
      delete globalThis.Buffer;
      const p = await import(${JSON.stringify(BUNDLE)});
      const bytes = new Uint8Array(1000).map((_, i) => i * 31);
      for (const codec of [p.createJsonCodec(), p.createMsgpackCodec()]) {
        const frame = codec.encode(p.notificationMessage('process/output', { processId: 'x', seq: 1, stream: 'pty', chunk: bytes }));
        const message = codec.decode(frame);
        const params = p.decodeParams('process/output', message.params);
        if (params.chunk.length !== 1000 || params.chunk.some((b, i) => b !== bytes[i])) throw new Error('mismatch in ' + codec.name);
      }
      console.log(typeof globalThis.Buffer, p.encodeBase64(new Uint8Array([104, 105, 10])));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(output.trim()).toBe('undefined aGkK');
  });
});

function esmEntry(packageJsonPath: string): string {
  const pkg = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as {
    exports?: Record<string, unknown>;
    module?: string;
    main?: string;
  };
  const pick = (target: unknown): string | undefined => {
    if (typeof target === 'string') return target;
    if (target && typeof target === 'object') {
      const conditions = target as Record<string, unknown>;
      for (const key of ['browser', 'import', 'module', 'default']) {
        const found = pick(conditions[key]);
        if (found?.endsWith('.js') || found?.endsWith('.mjs')) return found;
      }
    }
    return undefined;
  };
  const relative = pick(pkg.exports?.['.'] ?? pkg.exports) ?? pkg.module ?? pkg.main ?? 'index.js';
  return join(dirname(packageJsonPath), relative);
}
