// The `uexec` CLI under test: bundled from source once per test file (run it with the kit's
// `CliChild` / `runCli`).
import { resolve } from 'node:path';
import { type BuiltCli, buildCliFromSource } from '@execd/test-kit';

const PACKAGE_DIR = resolve(import.meta.dirname, '../..');

/** Bundles `src/cli/uexec.ts` (what `dist/cli/uexec.js` is) for this test file. */
export function buildUexec(): Promise<BuiltCli> {
  return buildCliFromSource({ packageDir: PACKAGE_DIR, entry: 'src/cli/uexec.ts', name: 'uexec' });
}
