import { defineConfig, type Options } from 'tsup';

/**
 * The build of every published package: ESM for Node 20, declarations and source maps, a clean
 * `dist/`. `entry` mirrors the package's `exports` map (and `bin`) one-to-one; `overrides` adds
 * what one package needs beyond that (protocol: platform-neutral; network-proxy: its bridge).
 */
export function packageBuild(
  entry: Record<string, string>,
  overrides: Options = {},
): ReturnType<typeof defineConfig> {
  return defineConfig({
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    clean: true,
    ...overrides,
  });
}
