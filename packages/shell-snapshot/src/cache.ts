import { ExecError, type Logger, NOOP_LOGGER, type ShellSnapshotRequest } from '@execd/protocol';
import { stableStringify } from './cache-key.ts';
import type { ShellSnapshotCacheOptions, SnapshotLaunchInput, SnapshotPrepareResult } from './cache-types.ts';
import { type CaptureResult, captureSnapshot } from './capture.ts';
import {
  type CaptureFailureReason,
  type CaptureLimits,
  DEFAULT_CAPTURE_LIMITS,
  runCaptureCommand,
} from './capture-runner.ts';
import { MAX_CACHED_SNAPSHOTS, SNAPSHOT_MAX_RETRY_BACKOFF_MS, SNAPSHOT_RETRY_BACKOFF_MS } from './limits.ts';
import { startupFiles, startupFilesStamp } from './rc-files.ts';
import { type LaunchCommand, restoreCommand } from './restore.ts';
import type { SnapshotShell } from './shell-kind.ts';
import { checkSnapshotRequest } from './validate.ts';

interface Entry {
  result: Promise<CaptureResult>;
  settled: CaptureResult | undefined;
  failures: number;
  retryAt: number;
}

/**
 * Captures each login shell once per key and restores it for every launch, in memory only.
 * Key: (scopeId, shell name and path, cwd, envPolicy, sandbox, startup-file stamps). Concurrent
 * launches with one key share one capture. A failed capture is remembered: launches run unmodified
 * (profile side effects happen once) until the backoff (1 s, doubling to 5 min) lets one try again.
 */
export class ShellSnapshotCache implements AsyncDisposable {
  readonly #options: ShellSnapshotCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Set<Promise<CaptureResult>>();
  readonly #abort = new AbortController();
  readonly #logger: Logger;
  readonly #now: () => number;
  #closing: Promise<void> | undefined;

  constructor(options: ShellSnapshotCacheOptions = {}) {
    this.#options = options;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Number of keys currently cached (pending, captured or failed). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Decides how `input` launches, capturing first when its key has no snapshot yet. Outcomes are
   * values; the only rejection is `ExecError('aborted')` when `cancelSignal` fires while waiting.
   */
  async prepare(input: SnapshotLaunchInput): Promise<SnapshotPrepareResult> {
    const { request, command } = input;
    if (request === undefined) return { status: 'notRequested', command };
    const check = checkSnapshotRequest(request, input.argv, command.argv);
    if (check.status === 'invalid') return check;
    if (check.status === 'skip') return { status: 'skipped', command };
    if (this.#abort.signal.aborted) return fallback(command, 'aborted', 'shell snapshot cache is closed');

    const key = await this.#key(check.shell, input);
    if (this.#abort.signal.aborted) return fallback(command, 'aborted', 'shell snapshot cache is closed');
    const entry = this.#lookup(key, () =>
      captureSnapshot(check.shell, command, check.shellStart, {
        runner: input.runCapture ?? this.#options.runCapture ?? runCaptureCommand,
        limits: this.#limits(),
        policy: input.envPolicy,
        defaultExcludes: this.#options.defaultExcludes,
        createEnv: this.#options.createEnv,
      }),
    );
    const result = await waitCancellable(entry.result, input.cancelSignal);
    if (!result.ok) return fallback(command, result.reason, result.detail);
    const restored = restoreCommand(result.snapshot, {
      command,
      shellStart: check.shellStart,
      requestEnv: input.env,
    });
    return { status: 'restored', command: restored };
  }

  /** Kills running captures, waits for them, and forgets every snapshot. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort();
      await Promise.all(this.#inFlight);
      this.#entries.clear();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #limits(): CaptureLimits {
    return {
      timeoutMs: this.#options.timeoutMs ?? DEFAULT_CAPTURE_LIMITS.timeoutMs,
      maxOutputBytes: this.#options.maxOutputBytes ?? DEFAULT_CAPTURE_LIMITS.maxOutputBytes,
      cancelSignal: this.#abort.signal,
    };
  }

  async #key(shell: SnapshotShell, input: SnapshotLaunchInput): Promise<string> {
    const request = input.request as ShellSnapshotRequest;
    const stamp =
      this.#options.trackStartupFiles === false
        ? ''
        : await startupFilesStamp(startupFiles(shell, input.command.env));
    return stableStringify([
      request.scopeId,
      shell,
      request.shell.path,
      input.command.cwd,
      input.envPolicy ?? null,
      input.sandbox ?? null,
      stamp,
    ]);
  }

  // Synchronous from lookup to insertion: two launches that race here share one capture.
  #lookup(key: string, capture: () => Promise<CaptureResult>): Entry {
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      this.#entries.delete(key); // re-insert: most recently used last
      this.#entries.set(key, existing);
      if (existing.settled?.ok === false && this.#now() >= existing.retryAt) {
        this.#logger.debug('retrying shell snapshot capture', { failures: existing.failures });
        this.#start(existing, capture);
      }
      return existing;
    }
    const entry: Entry = {
      result: Promise.resolve(undefined as never),
      settled: undefined,
      failures: 0,
      retryAt: 0,
    };
    this.#start(entry, capture);
    this.#entries.set(key, entry);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= (this.#options.maxEntries ?? MAX_CACHED_SNAPSHOTS)) break;
      this.#entries.delete(oldest); // a pending capture still completes for the launches awaiting it
    }
    return entry;
  }

  #start(entry: Entry, capture: () => Promise<CaptureResult>): void {
    entry.settled = undefined;
    const result = capture().then((outcome) => {
      entry.settled = outcome;
      if (outcome.ok) {
        entry.failures = 0;
        this.#logger.debug('captured shell snapshot', { shell: outcome.snapshot.shell });
      } else {
        entry.failures += 1;
        entry.retryAt = this.#now() + this.#backoff(entry.failures);
        this.#logger.warn('shell snapshot capture failed', {
          reason: outcome.reason,
          detail: outcome.detail,
        });
      }
      return outcome;
    });
    entry.result = result;
    this.#inFlight.add(result);
    void result.finally(() => this.#inFlight.delete(result));
  }

  #backoff(failures: number): number {
    const base = this.#options.retryBackoffMs ?? SNAPSHOT_RETRY_BACKOFF_MS;
    const cap = this.#options.maxRetryBackoffMs ?? SNAPSHOT_MAX_RETRY_BACKOFF_MS;
    return Math.min(base * 2 ** Math.min(failures - 1, 30), cap);
  }
}

function fallback(
  command: LaunchCommand,
  reason: CaptureFailureReason,
  detail: string,
): SnapshotPrepareResult {
  return { status: 'fallback', command, failure: { reason, detail } };
}

async function waitCancellable<T>(promise: Promise<T>, cancelSignal: AbortSignal | undefined): Promise<T> {
  if (cancelSignal === undefined) return promise;
  const aborted = (): ExecError => new ExecError('aborted', 'stopped waiting for the shell snapshot capture');
  if (cancelSignal.aborted) throw aborted();
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        onAbort = () => reject(aborted());
        cancelSignal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    if (onAbort !== undefined) cancelSignal.removeEventListener('abort', onAbort);
  }
}
