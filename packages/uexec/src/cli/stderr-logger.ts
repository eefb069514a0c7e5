import type { Logger } from '@execd/protocol';
import { visibleJson } from '@execd/unified-exec';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

function describe(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

/**
 * A Logger writing one JSON line per entry to stderr at `minimum` and above, for `UEXEC_LOG=debug`;
 * undefined (no logging) when `minimum` is not a level name.
 */
export function stderrLogger(minimum: string | undefined): Logger | undefined {
  const floor = LEVELS.indexOf(minimum as Level);
  if (floor < 0) return undefined;
  const line =
    (level: Level) =>
    (message: string, fields?: Readonly<Record<string, unknown>>): void => {
      if (LEVELS.indexOf(level) < floor) return;
      // The field names of execd-server's log lines (`ts`, `level`, `msg`), so one parser reads both.
      const entry: Record<string, unknown> = { ts: new Date().toISOString(), level, msg: message };
      for (const [key, value] of Object.entries(fields ?? {})) entry[key] = describe(value);
      // Fields may hold what the model chose (commands, paths): no raw bidi or C1 on the terminal.
      process.stderr.write(`${visibleJson(JSON.stringify(entry))}\n`);
    };
  return {
    trace: line('trace'),
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
  };
}
