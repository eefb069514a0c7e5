import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// The proxy suites checked children and fds after each test: keep checking after each test.
export default defineExecdConfig({ globalSetup: ['test/global-setup.ts'], leakCheck: 'test' });
