// @execd/test-kit: what every package's tests share (private, never published).
export { type Origin, startOrigin, startTlsOrigin } from './origin.ts';
