import { defineExecdConfig } from '../packages/test-kit/src/vitest-config.ts';

// `pnpm test:compat`: the real Codex CLI 0.169.0 (installed by ../../shared/tools/codex-peer) as a
// client of the original exec-server and of execd-server, side by side (codex-client/). Not part
// of `npm test`: the files end in `.compat.ts`, which the default config does not pick up, and the
// original is a 400 MB download. Each file runs several Codex sessions of ~20 s each.
export default defineExecdConfig({
  include: ['codex-client/**/*.compat.ts'],
  exclude: ['**/node_modules/**'],
  fileParallelism: false,
  timeouts: { testMs: 120_000, hookMs: 600_000, teardownMs: 60_000 },
});
