import { defineConfig } from 'tsup';

// Entries mirror the exports map one-to-one, plus the bridge, which runs as its own process
// (`node dist/bridge.js '<config>'`) and is not exported.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    bridge: 'src/bridge/bridge-main.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  // One self-contained file per entry: the bridge process loads nothing but bridge.js.
  splitting: false,
});
