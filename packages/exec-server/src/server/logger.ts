import type { LogFields, Logger } from '@execd/protocol';

/** Severity of a log record, lowest first. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVEL_ORDER: Readonly<Record<LogLevel, number>> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };

/** Every accepted `--log-level` value; `off` silences the logger. */
export const LOG_LEVELS: readonly (LogLevel | 'off')[] = ['trace', 'debug', 'info', 'warn', 'error', 'off'];

/** True when `value` names a log level (or `off`). */
export function isLogLevel(value: string): value is LogLevel | 'off' {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Options of {@link createJsonLineLogger}. */
export interface JsonLineLoggerOptions {
  /** Receives one complete JSON line (with its trailing newline) per record. */
  readonly write: (line: string) => void;
  /** Records below this level are dropped; `off` drops everything. Default `info`. */
  readonly level?: LogLevel | 'off';
  /** Clock for the `ts` field (injectable for tests). */
  readonly now?: () => Date;
}

function serialiseField(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/**
 * A logger writing one JSON object per line: `{"ts","level","msg",...fields}`. Used by the CLI
 * (to stderr); library code only ever sees the `Logger` interface.
 */
export function createJsonLineLogger(options: JsonLineLoggerOptions): Logger {
  const threshold = options.level === 'off' ? Number.POSITIVE_INFINITY : LEVEL_ORDER[options.level ?? 'info'];
  const now = options.now ?? (() => new Date());
  const emit =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (LEVEL_ORDER[level] < threshold) return;
      const record: Record<string, unknown> = { ts: now().toISOString(), level, msg: message };
      if (fields) {
        for (const [key, value] of Object.entries(fields)) {
          if (!(key in record)) record[key] = serialiseField(value);
        }
      }
      let line: string;
      try {
        line = JSON.stringify(record);
      } catch {
        line = JSON.stringify({ ts: record.ts, level, msg: message, fields: 'unserialisable' });
      }
      options.write(`${line}\n`);
    };
  return {
    trace: emit('trace'),
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
  };
}
