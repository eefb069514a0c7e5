import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

// The server and table suites checked tracked processes and sockets after each test: keep
// checking after each test. (`vitest.compat.config.ts` runs the compat suite against the original.)
export default defineExecdConfig({ leakCheck: 'test' });
