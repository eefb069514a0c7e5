// A Logger that records what it is given, for asserting that something was logged.
import type { LogFields, Logger } from '@execd/protocol';

/** One captured log record. */
export interface LogRecord {
  readonly level: string;
  readonly message: string;
  readonly fields: LogFields | undefined;
}

/** A Logger that records everything (for asserting that something was logged). */
export function captureLogger(): { readonly logger: Logger; readonly records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      records.push({ level, message, fields });
    };
  return {
    records,
    logger: {
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
    },
  };
}
