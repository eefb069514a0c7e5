// Bundles a package's CLI from its sources for a test file, so CLI tests run the current code
// without depending on (or racing) a `pnpm build`.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Options of {@link buildCliFromSource}. */
export interface BuildCliOptions {
  /** The package's folder (its node_modules resolves the bundle's external imports). */
  readonly packageDir: string;
  /** The CLI's entry, relative to `packageDir`: `src/cli/uexec.ts`. */
  readonly entry: string;
  /** The bundle's name: `uexec` gives `uexec.js`. */
  readonly name: string;
}

/** A CLI bundled for a test file; `remove()` deletes it (call it in `afterAll`). */
export interface BuiltCli {
  /** Path of the bundled script, to run with `node`. */
  readonly script: string;
  remove(): Promise<void>;
}

/**
 * Bundles `entry` (what the package's `dist/cli/<name>.js` is) into a private folder under the
 * package's node_modules, so its external imports resolve like the published build's.
 */
export async function buildCliFromSource(options: BuildCliOptions): Promise<BuiltCli> {
  const outDir = join(
    options.packageDir,
    'node_modules',
    '.cache',
    `${options.name}-cli-test-${process.pid}-${Date.now()}`,
  );
  // Loaded on use: tsup (and esbuild) is heavy, and most test files import the kit without it.
  const { build } = await import('tsup');
  await build({
    entry: { [options.name]: join(options.packageDir, options.entry) },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    dts: false,
    sourcemap: false,
    clean: false,
    silent: true,
    config: false,
  });
  return {
    script: join(outDir, `${options.name}.js`),
    remove: () => rm(outDir, { recursive: true, force: true }),
  };
}
