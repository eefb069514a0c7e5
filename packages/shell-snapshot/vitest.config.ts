import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// Every test file checked for leftover children after each test: keep checking after each test.
export default defineExecdConfig({ leakCheck: 'test' });
