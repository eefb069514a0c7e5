/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where this package logs: inject one (e.g. the exec-server's logger); the default drops everything.
 * Each decision is logged at `debug`, connection-level failures at `debug`, lifecycle at `info`.
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
