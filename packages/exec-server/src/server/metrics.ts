import { readdirSync } from 'node:fs';
import { isMethodName, RPC_ERROR_NUMBERS, RpcError } from '@execd/protocol';
import type { ForkServerStats } from '@execd/pty-utils';
import type { PreparedSandboxStats } from '@execd/sandboxing';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ConnectionNotification, ProcessNotification, ProcessTable } from '../types.ts';
import type { PartialFrameBudgetStats } from './partial-frame-budget.ts';

/**
 * Buckets of the request-latency histogram, in seconds. Most requests answer in well under a
 * millisecond (`process/write`, `process/terminate`); `process/start` takes a fork and, sandboxed,
 * tens of milliseconds; a `process/read` long-poll can wait up to its `waitMs` (30 s in practice).
 */
const REQUEST_DURATION_BUCKETS_S: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** The `method` label of anything that is not a method of the protocol (bounded cardinality). */
const OTHER_METHOD = 'other';

/** Process states of `process/list`, always exported (zero included) so dashboards see every series. */
const PROCESS_STATES = ['starting', 'running', 'exited', 'closed'] as const;

/** Session lifecycle events counted by `execd_session_events_total`. */
const SESSION_EVENTS = ['created', 'detached', 'resumed', 'resume_failed', 'expired'] as const;

/** A session lifecycle event: created, detached (connection lost), resumed, resume_failed, expired. */
export type SessionEvent = (typeof SESSION_EVENTS)[number];

/** The sessions of a server as the metrics see them at scrape time. */
export interface SessionSnapshot {
  readonly attached: number;
  readonly detached: number;
  /** The process table of every live session. */
  readonly tables: Iterable<Pick<ProcessTable, 'list'>>;
}

/** Where process output reached a client: pushed as a notification, or answered to a read. */
export type StreamedVia = 'notification' | 'read';

function methodLabel(method: string): string {
  return isMethodName(method) ? method : OTHER_METHOD;
}

function errorCodeLabel(error: unknown): string {
  if (RpcError.is(error)) return String(RPC_ERROR_NUMBERS[error.code]);
  return String(RPC_ERROR_NUMBERS.internal);
}

function openFdCount(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return Number.NaN;
  }
}

/**
 * The Prometheus metrics of one exec-server, in a Registry of its own (never prom-client's global
 * one, so several servers in one process do not mix, and a closed server leaves nothing behind).
 * Label values are bounded: methods outside the protocol count as `other`, error codes are the
 * JSON-RPC numbers. Served as `GET /metrics` in the text exposition format.
 */
export class ExecServerMetrics {
  /** The registry holding every metric of this server. */
  readonly registry: Registry;
  readonly #requestDuration: Histogram<'method'>;
  readonly #requestErrors: Counter<'method' | 'code'>;
  readonly #streamedBytes: Counter<'via'>;
  readonly #connections: Gauge;
  readonly #connectionsTotal: Counter;
  readonly #sessionEvents: Counter<'event'>;
  readonly #processesStarted: Counter<'sandbox_type'>;
  readonly #sandboxDenials: Counter;
  #snapshot: () => SessionSnapshot = () => ({ attached: 0, detached: 0, tables: [] });
  #preparedStats: (() => PreparedSandboxStats) | undefined;
  #forkServerStats: (() => ForkServerStats) | undefined;
  #partialFrameStats: (() => PartialFrameBudgetStats) | undefined;

  constructor() {
    const registry = new Registry();
    this.registry = registry;
    const registers = [registry];
    this.#requestDuration = new Histogram({
      name: 'execd_request_duration_seconds',
      help: 'Time from a request being dispatched to its answer, by JSON-RPC method.',
      labelNames: ['method'],
      buckets: [...REQUEST_DURATION_BUCKETS_S],
      registers,
    });
    this.#requestErrors = new Counter({
      name: 'execd_request_errors_total',
      help: 'Requests answered with an error, by method and JSON-RPC error code.',
      labelNames: ['method', 'code'],
      registers,
    });
    this.#streamedBytes = new Counter({
      name: 'execd_streamed_bytes_total',
      help: 'Process output bytes delivered to clients, pushed (notification) or read (process/read).',
      labelNames: ['via'],
      registers,
    });
    this.#connections = new Gauge({
      name: 'execd_connections',
      help: 'Open client connections.',
      registers,
    });
    this.#connectionsTotal = new Counter({
      name: 'execd_connections_total',
      help: 'Client connections accepted since start.',
      registers,
    });
    this.#sessionEvents = new Counter({
      name: 'execd_session_events_total',
      help: 'Session lifecycle: created, detached (connection lost), resumed (reconnect), resume_failed, expired.',
      labelNames: ['event'],
      registers,
    });
    this.#processesStarted = new Counter({
      name: 'execd_processes_started_total',
      help: 'Processes started, by the sandbox actually applied.',
      labelNames: ['sandbox_type'],
      registers,
    });
    this.#sandboxDenials = new Counter({
      name: 'execd_sandbox_denials_total',
      help: 'Processes whose exit was judged a sandbox denial (sandboxDenied on process/exited).',
      registers,
    });
    // Every labelled series exists from the start (at 0), so a dashboard never sees it appear late.
    for (const via of ['notification', 'read'] as const) this.#streamedBytes.inc({ via }, 0);
    for (const event of SESSION_EVENTS) this.#sessionEvents.inc({ event }, 0);
    const snapshot = (): SessionSnapshot => this.#snapshot();
    new Gauge({
      name: 'execd_sessions',
      help: 'Live sessions, attached to a connection or detached (waiting for a resume).',
      labelNames: ['state'],
      registers,
      collect() {
        const { attached, detached } = snapshot();
        this.set({ state: 'attached' }, attached);
        this.set({ state: 'detached' }, detached);
      },
    });
    new Gauge({
      name: 'execd_processes',
      help: 'Processes in the process tables of live sessions, by state.',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = new Map<string, number>(PROCESS_STATES.map((state) => [state, 0]));
        for (const table of snapshot().tables) {
          for (const entry of table.list().processes)
            counts.set(entry.state, (counts.get(entry.state) ?? 0) + 1);
        }
        for (const [state, count] of counts) this.set({ state }, count);
      },
    });
    // The fork server (on unless `--no-fork-server`): read at scrape time; 0 without one.
    const forkServer = (): ForkServerStats | undefined => this.#forkServerStats?.();
    new Gauge({
      name: 'execd_fork_server_up',
      help: 'Whether commands on pipes are started by the fork server (1) or forked by the server itself (0).',
      registers,
      collect() {
        this.set(forkServer()?.usable ? 1 : 0);
      },
    });
    new Counter({
      name: 'execd_fork_server_commands_total',
      help: 'Requests to the fork server, by outcome: started, or failed (exec failure, helper gone).',
      labelNames: ['outcome'],
      registers,
      collect() {
        const stats = forkServer();
        this.reset();
        this.inc({ outcome: 'started' }, stats?.started ?? 0);
        this.inc({ outcome: 'failed' }, stats?.failed ?? 0);
      },
    });
    // Prepared sandboxes (`--prepare-sandboxes`): read from the pool at scrape time; absent without.
    const prepared = (): PreparedSandboxStats | undefined => this.#preparedStats?.();
    new Gauge({
      name: 'execd_prepared_sandboxes',
      help: 'Sandboxes started ahead and waiting (or starting) for their command (--prepare-sandboxes).',
      registers,
      collect() {
        this.set(prepared()?.waiting ?? 0);
      },
    });
    new Counter({
      name: 'execd_prepared_sandbox_commands_total',
      help: 'Sandboxed commands of a kind that can be prepared for, by how they started: in a prepared sandbox, or cold.',
      labelNames: ['start'],
      registers,
      collect() {
        const stats = prepared();
        this.reset();
        this.inc({ start: 'prepared' }, stats?.commands.prepared ?? 0);
        this.inc({ start: 'cold' }, stats?.commands.cold ?? 0);
      },
    });
    new Counter({
      name: 'execd_prepared_sandboxes_ended_total',
      help: 'Prepared sandboxes ended without a command: unusable (the command planned another sandbox, or a folder changed), died, idle, evicted, closed.',
      labelNames: ['reason'],
      registers,
      collect() {
        const stats = prepared();
        this.reset();
        for (const reason of ['unusable', 'died', 'idle', 'evicted', 'closed'] as const)
          this.inc({ reason }, stats?.ended[reason] ?? 0);
      },
    });
    // The bound on frames still arriving (WebSocket listener): read at scrape time; zero without.
    const partial = (): PartialFrameBudgetStats | undefined => this.#partialFrameStats?.();
    new Gauge({
      name: 'execd_inbound_large_frame_bytes',
      help: 'Bytes of large inbound frames being received now (bounded together across connections).',
      registers,
      collect() {
        this.set(partial()?.admittedBytes ?? 0);
      },
    });
    new Gauge({
      name: 'execd_inbound_large_frame_peak_bytes',
      help: 'The most bytes of large inbound frames ever received at once.',
      registers,
      collect() {
        this.set(partial()?.peakBytes ?? 0);
      },
    });
    new Counter({
      name: 'execd_inbound_large_frame_waits_total',
      help: 'Times a connection stopped reading its large frame: no room in the bound, or a heap collection due.',
      registers,
      collect() {
        this.reset();
        this.inc(partial()?.waits ?? 0);
      },
    });
    new Counter({
      name: 'execd_inbound_large_frame_stalls_total',
      help: 'Large inbound frames that stopped arriving while others waited, and gave their room up.',
      registers,
      collect() {
        this.reset();
        this.inc(partial()?.stalls ?? 0);
      },
    });
    new Gauge({
      name: 'process_resident_memory_bytes',
      help: 'Resident memory size of the exec-server process in bytes.',
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'nodejs_heap_size_used_bytes',
      help: 'V8 heap in use by the exec-server process, in bytes.',
      registers,
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    new Gauge({
      name: 'process_open_fds',
      help: 'Open file descriptors of the exec-server process (Linux).',
      registers,
      collect() {
        this.set(openFdCount());
      },
    });
  }

  /** The Content-Type of {@link render}'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Tells the metrics where to read the live sessions from at scrape time. */
  bindSessions(snapshot: () => SessionSnapshot): void {
    this.#snapshot = snapshot;
  }

  /** Tells the metrics where to read the prepared sandboxes' counts from at scrape time. */
  bindPreparedSandboxes(stats: () => PreparedSandboxStats): void {
    this.#preparedStats = stats;
  }

  /** Tells the metrics where to read the fork server's counts from at scrape time. */
  bindForkServer(stats: () => ForkServerStats): void {
    this.#forkServerStats = stats;
  }

  /** Tells the metrics where to read the bound on arriving frames from at scrape time. */
  bindPartialFrames(stats: () => PartialFrameBudgetStats): void {
    this.#partialFrameStats = stats;
  }

  /** The current values in the Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** One answered request: its duration, and its error when it failed. */
  observeRequest(method: string, durationSeconds: number, error?: unknown): void {
    const label = methodLabel(method);
    this.#requestDuration.observe({ method: label }, durationSeconds);
    if (error !== undefined) this.#requestErrors.inc({ method: label, code: errorCodeLabel(error) });
  }

  /** Output bytes that reached a client. */
  observeStreamedBytes(via: StreamedVia, bytes: number): void {
    if (bytes > 0) this.#streamedBytes.inc({ via }, bytes);
  }

  /** A successful answer: counts started processes and the output bytes a `process/read` returned. */
  observeResult(method: string, result: unknown): void {
    if (typeof result !== 'object' || result === null) return;
    if (method === 'process/start') {
      const sandboxType = (result as { sandboxType?: unknown }).sandboxType;
      this.#processesStarted.inc({ sandbox_type: typeof sandboxType === 'string' ? sandboxType : 'none' });
    } else if (method === 'process/read') {
      const chunks = (result as { chunks?: unknown }).chunks;
      if (!Array.isArray(chunks)) return;
      let bytes = 0;
      for (const chunk of chunks as { chunk?: unknown }[]) {
        if (chunk.chunk instanceof Uint8Array) bytes += chunk.chunk.byteLength;
      }
      this.observeStreamedBytes('read', bytes);
    }
  }

  /** A notification pushed to a client: counts the output bytes it carries. */
  observeNotificationSent(notification: ProcessNotification | ConnectionNotification): void {
    if (notification.method === 'process/output') {
      this.observeStreamedBytes('notification', notification.params.chunk.byteLength);
    }
  }

  /** Every notification of every session (attached or not): counts sandbox denials. */
  observeProcessNotification(notification: ProcessNotification): void {
    if (notification.method === 'process/exited' && notification.params.sandboxDenied === true) {
      this.#sandboxDenials.inc();
    }
  }

  /** A connection was accepted (`open`) or went away (`close`). */
  observeConnection(change: 'open' | 'close'): void {
    if (change === 'open') {
      this.#connections.inc();
      this.#connectionsTotal.inc();
    } else {
      this.#connections.dec();
    }
  }

  /** A session lifecycle event (see the help text of `execd_session_events_total`). */
  observeSession(event: SessionEvent): void {
    this.#sessionEvents.inc({ event });
  }
}
