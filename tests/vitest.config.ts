import { defineExecdConfig } from '../packages/test-kit/src/vitest-config.ts';

// Cross-package suites: real servers, real children, real bubblewrap. One file at a time keeps the
// load of a 2-core machine sane; `EXECD_STRESS=full` (pnpm test:stress) runs the full sizes. The
// kit's leak check fails a file that leaves a child process or an fd (a socket) behind.
const FULL = process.env.EXECD_STRESS === 'full';

export default defineExecdConfig({
  include: ['**/*.test.ts'],
  exclude: ['**/node_modules/**'],
  fileParallelism: false,
  timeouts: {
    testMs: FULL ? 3_600_000 : 180_000,
    hookMs: FULL ? 600_000 : 60_000,
    teardownMs: 60_000,
  },
});
