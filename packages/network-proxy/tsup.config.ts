import { defineConfig } from 'tsup';

// Entries mirror the exports map one-to-one (plus the bridge, which runs as its own process).
export default defineConfig({
  entry: {
    index: 'src/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  sourcemap: true,
  clean: true,
});
