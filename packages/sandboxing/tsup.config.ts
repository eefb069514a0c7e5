import { defineConfig } from 'tsup';

// Entries mirror the exports map (and bin) one-to-one.
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
