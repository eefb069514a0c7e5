import { defineConfig } from 'vitest/config';

// `pnpm test:compat`: the execd client against the original Codex exec-server (the pinned
// @openai/codex, installed on first use into ~/.cache/execd-peers by @execd/test-kit). Not part of `pnpm test` (the files end in `.compat.ts`, which
// the default config does not pick up). The raw server transcripts are exec-server's compat suite.
// Scenarios of the shared suite that test execd additions or execd's own error texts cannot pass
// against the original; each one's observed behaviour there is asserted instead in
// test/compat/client-differences.compat.ts.
const EXECD_ONLY_SCENARIOS = [
  'execd: ', // process/resize, firstRetainedSeq: execd additions
  'process/start errors: empty argv, bad cwd, spawn failure', // the original's texts differ
  'sandboxed_process_reports_denied_write', // execd's `sandbox` field form (protocol.md, difference 3)
];
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export default defineConfig({
  test: {
    include: ['test/compat/**/*.compat.ts'],
    testNamePattern: new RegExp(`^(?!.*(${EXECD_ONLY_SCENARIOS.map(escapeRegExp).join('|')}))`),
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
