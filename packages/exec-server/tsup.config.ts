import { defineConfig } from 'tsup';

// Entries mirror the exports map (and bin) one-to-one.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'client/index': 'src/client/index.ts',
    'server/index': 'src/server/index.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/execd-server': 'src/cli/execd-server.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  sourcemap: true,
  clean: true,
});
