/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where execd code logs: inject one (e.g. a pino adapter); the default drops everything.
 * RPCs are logged at `trace`, state changes with their reason at `debug`.
 */
export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ignore = (): void => {};

/** A Logger that drops every line (the default everywhere). */
export const NOOP_LOGGER: Logger = Object.freeze({
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});
