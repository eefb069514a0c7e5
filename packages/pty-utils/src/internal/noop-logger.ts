import type { Logger } from '../types.ts';

const noop = (): void => {};

/** The default `Logger`: drops everything. */
export const NOOP_LOGGER: Logger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop };
