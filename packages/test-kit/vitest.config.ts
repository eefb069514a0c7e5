import { defineExecdConfig } from './src/vitest-config.ts';

export default defineExecdConfig({ include: ['src/**/*.test.ts'], leakCheck: 'test' });
