// The `execd-server` CLI under test: bundled from source once per test file (run it with the
// kit's `CliChild`).
import { resolve } from 'node:path';
import { type BuiltCli, buildCliFromSource } from '@execd/test-kit';

const PACKAGE_DIR = resolve(import.meta.dirname, '../..');

/** Bundles `src/cli/execd-server.ts` (what `dist/cli/execd-server.js` is) for this test file. */
export function buildCli(): Promise<BuiltCli> {
  return buildCliFromSource({
    packageDir: PACKAGE_DIR,
    entry: 'src/cli/execd-server.ts',
    name: 'execd-server',
  });
}
