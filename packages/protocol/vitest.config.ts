import { defineExecdConfig } from '../test-kit/src/vitest-config.ts';

export default defineExecdConfig();
