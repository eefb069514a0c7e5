import { defineConfig } from 'vitest/config';

// Cross-package suites: real servers, real children, real bubblewrap. One file at a time keeps the
// load of a 2-core machine sane; `EXECD_STRESS=full` (pnpm test:stress) runs the full sizes.
const FULL = process.env.EXECD_STRESS === 'full';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    fileParallelism: false,
    // Fails a file that leaves a child process or a socket behind.
    setupFiles: ['./helpers/no-leftovers.ts'],
    testTimeout: FULL ? 3_600_000 : 180_000,
    hookTimeout: FULL ? 600_000 : 60_000,
    teardownTimeout: 60_000,
  },
});
