import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// The CLI suites spawn uexec children: check for leftovers after each test, as unified-exec does.
export default defineExecdConfig({ leakCheck: 'test' });
