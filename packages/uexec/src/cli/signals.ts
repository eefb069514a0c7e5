import type { CliSession } from './cli-session.ts';

/** The exit status after each signal: 128 + its number, as a shell reports it. */
export const SIGNAL_EXIT_CODES: Readonly<Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', number>> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
};

/**
 * Makes every exit path (signals included) reap the session's processes first; `onSignal` runs
 * before the reaping (to stop printing results of what is being torn down).
 */
export function reapOnSignals(session: () => CliSession | undefined, onSignal?: () => void): void {
  for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
    process.once(signal, () => {
      onSignal?.();
      void (async () => {
        await session()
          ?.close()
          .catch(() => undefined);
        process.exit(code);
      })();
    });
  }
}
