import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// The scenario suites checked for leftover children after each test: keep checking after each test.
export default defineExecdConfig({ leakCheck: 'test' });
