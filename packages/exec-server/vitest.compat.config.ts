import { defineConfig } from 'vitest/config';

// `pnpm test:compat`: the raw transcripts of execd's server and the original Codex exec-server
// (the pinned @openai/codex, installed on first use into ~/.cache/execd-peers by
// @execd/test-kit) side by side. Not part of `pnpm test` (the files
// end in `.compat.ts`, which the default config does not pick up). The execd client against the
// original is exec-client's compat suite.
export default defineConfig({
  test: {
    include: ['test/compat/**/*.compat.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
