import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// Every test file closes what it spawned after each test: check for leaks after each test.
export default defineExecdConfig({ leakCheck: 'test' });
