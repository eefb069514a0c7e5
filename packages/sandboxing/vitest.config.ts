import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// The sandbox suites checked for leftover children after each test: keep checking after each test.
export default defineExecdConfig({ leakCheck: 'test' });
