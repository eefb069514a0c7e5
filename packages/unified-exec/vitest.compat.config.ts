import { defineConfig } from 'vitest/config';

// `pnpm test:compat`: execd's environment against the original Codex exec-server (installed by
// ../../../shared/tools/codex-peer). Not part of `pnpm test`: the files end in `.compat.ts`.
export default defineConfig({
  test: {
    include: ['test/compat/**/*.compat.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
