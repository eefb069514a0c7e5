/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/** Where the snapshot cache logs (the exec-server's Logger fits); the default drops everything. */
export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ignore = (): void => {};

/** A Logger that drops every line (the default). */
export const NOOP_LOGGER: Logger = Object.freeze({
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});
