import { randomUUID } from 'node:crypto';
import { ExecError, type Logger, NOOP_LOGGER, RpcError } from '@execd/protocol';
import type { NetworkPolicyRequester } from '../local/process-network.ts';
import type { ProcessNotification, ProcessTable } from '../types.ts';
import type { ExecServerMetrics, SessionSnapshot } from './metrics.ts';

/**
 * How long a session whose connection went away is kept for a resume before its processes are
 * terminated: the original's `DETACHED_SESSION_TTL`. The client's recovery gives up after 25 s,
 * inside this window.
 */
export const DETACHED_SESSION_TTL_MS = 30_000;

/**
 * How long the connection holding a session has to answer a ping once another connection asks to
 * resume that session, before it is judged dead and dropped. A connection cut without a FIN would
 * otherwise pin its session until the keepalive notices (3 x 30 s), past the client's 25 s
 * recovery window. A live peer answers a ping within a round trip; 2 s leaves room for a loaded
 * host. The resume itself is still refused (-32010, as the original); the client's next attempt
 * then finds the session detached.
 */
export const RESUME_LIVENESS_TIMEOUT_MS = 2_000;

/** The connection side of an attachment: where notifications go, and how it learns it lost the session. */
export interface SessionAttachment {
  /** Receives every notification of the session's processes while this attachment is current. */
  notify(notification: ProcessNotification): void;
  /** Another connection resumed the session after this one detached; abandon in-flight work. */
  evict(): void;
  /** Asks this connection's client (`network/policyRequest`); absent: the connection cannot ask. */
  readonly requestNetworkPolicy?: NetworkPolicyRequester | undefined;
  /**
   * Checks that this connection's peer is still there (a WebSocket ping) and drops the connection
   * (which detaches the session) unless it answers within `timeoutMs`. Absent: no check possible.
   */
  readonly probeLiveness?: ((timeoutMs: number) => void) | undefined;
}

/** What a new session's process table is built with. */
export interface ProcessTableContext {
  readonly sessionId: string;
  /**
   * Asks the client currently attached to the session (`network/policyRequest`); rejects at once
   * while the session is detached (nobody to answer: the connection is denied, uncached).
   */
  readonly requestNetworkPolicy: NetworkPolicyRequester;
}

/** Builds the process table of a new session. */
export type CreateProcessTable = (context: ProcessTableContext) => ProcessTable;

/** Options of {@link SessionRegistry}. */
export interface SessionRegistryOptions {
  readonly createProcessTable: CreateProcessTable;
  /** Default {@link DETACHED_SESSION_TTL_MS}. */
  readonly detachedTtlMs?: number;
  /**
   * When a resume finds the session attached elsewhere, the holder must answer a ping within this
   * long or be dropped (default {@link RESUME_LIVENESS_TIMEOUT_MS}; 0 = never check).
   */
  readonly resumeLivenessTimeoutMs?: number;
  readonly logger?: Logger;
  /** Counts session events and sandbox denials (default: not counted). */
  readonly metrics?: ExecServerMetrics | undefined;
}

/** @internal One registry row; exported only so declarations can name it. */
export class SessionEntry {
  readonly id: string;
  readonly table: ProcessTable;
  readonly subscription: Disposable;
  current: SessionAttachment | undefined;
  /**
   * The attachment the session was detached from, held weakly: a resume evicts it if it is still
   * around (work of its connection still in flight), but a detached session must not keep a
   * finished connection (its socket, its buffers, its handler) alive for the whole TTL.
   */
  detachedFrom: WeakRef<SessionAttachment> | undefined;
  expiresAtMs: number | undefined;
  timer: NodeJS.Timeout | undefined;

  constructor(id: string, table: ProcessTable, attachment: SessionAttachment, metrics?: ExecServerMetrics) {
    this.id = id;
    this.table = table;
    this.current = attachment;
    this.subscription = table.subscribe((notification) => {
      metrics?.observeProcessNotification(notification);
      this.current?.notify(notification);
    });
  }

  isExpired(nowMs: number): boolean {
    return this.expiresAtMs !== undefined && nowMs >= this.expiresAtMs;
  }

  clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** One connection's hold on a session: its process table, and whether it is still the attached one. */
export class SessionHandle {
  readonly #registry: SessionRegistry;
  readonly #entry: SessionEntry;
  readonly #attachment: SessionAttachment;

  /** @internal Created by {@link SessionRegistry.attach}. */
  constructor(registry: SessionRegistry, entry: SessionEntry, attachment: SessionAttachment) {
    this.#registry = registry;
    this.#entry = entry;
    this.#attachment = attachment;
  }

  /** The session's id (a UUID v4), stable across resumes. */
  get sessionId(): string {
    return this.#entry.id;
  }

  /** The session's process table. */
  get table(): ProcessTable {
    return this.#entry.table;
  }

  /** False once this connection detached (and possibly another one resumed the session). */
  isAttached(): boolean {
    return this.#entry.current === this.#attachment;
  }

  /** Detaches this connection: notifications stop, and the TTL starts. Idempotent. */
  detach(): void {
    this.#registry.detach(this.#entry, this.#attachment);
  }
}

/**
 * Sessions by id, shared by every connection of a server (spec §2.3). A session is attached to
 * at most one connection; a detached one waits `detachedTtlMs` for a resume, then its processes
 * are terminated and its id forgotten. A resume that finds the session attached is refused
 * (-32010) and makes the holding connection prove it is alive (see {@link RESUME_LIVENESS_TIMEOUT_MS}).
 *
 * ```
 *  new ──attach──> attached ──detach──> detached ──TTL──> expired (processes terminated)
 *                   ^   │                  │
 *                   │   └─resume: -32010 + liveness ping; no pong: holder dropped ─> detached
 *                   └───────resume─────────┘
 * ```
 */
export class SessionRegistry implements AsyncDisposable {
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #createProcessTable: CreateProcessTable;
  readonly #ttlMs: number;
  readonly #livenessTimeoutMs: number;
  readonly #logger: Logger;
  readonly #pendingShutdowns = new Set<Promise<void>>();
  readonly #metrics: ExecServerMetrics | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: SessionRegistryOptions) {
    this.#createProcessTable = options.createProcessTable;
    this.#ttlMs = options.detachedTtlMs ?? DETACHED_SESSION_TTL_MS;
    this.#livenessTimeoutMs = options.resumeLivenessTimeoutMs ?? RESUME_LIVENESS_TIMEOUT_MS;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#metrics = options.metrics;
  }

  /** Attached and detached sessions and their process tables, for metrics. */
  snapshot(): SessionSnapshot {
    let attached = 0;
    for (const entry of this.#sessions.values()) if (entry.current !== undefined) attached += 1;
    const tables = [...this.#sessions.values()].map((entry) => entry.table);
    return { attached, detached: this.#sessions.size - attached, tables };
  }

  /** Number of live (attached or detached) sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Creates a session (no `resumeSessionId`) or re-attaches a detached one. Throws `RpcError`
   * -32600 `unknown session id {id}` (also after expiry) or -32010 while another connection holds it.
   */
  async attach(resumeSessionId: string | undefined, attachment: SessionAttachment): Promise<SessionHandle> {
    if (this.#closing) throw new RpcError('internal', 'exec-server is shutting down');
    if (resumeSessionId === undefined) {
      const id = randomUUID();
      let entry: SessionEntry | undefined;
      const requestNetworkPolicy: NetworkPolicyRequester = (params, options) => {
        const ask = entry?.current?.requestNetworkPolicy;
        if (ask === undefined) {
          return Promise.reject(
            new ExecError(
              'transportClosed',
              `no client is attached to session ${id} to answer network/policyRequest`,
            ),
          );
        }
        return ask(params, options);
      };
      entry = new SessionEntry(
        id,
        this.#createProcessTable({ sessionId: id, requestNetworkPolicy }),
        attachment,
        this.#metrics,
      );
      this.#sessions.set(id, entry);
      this.#metrics?.observeSession('created');
      this.#logger.debug('session created', { sessionId: id });
      return new SessionHandle(this, entry, attachment);
    }
    const entry = this.#sessions.get(resumeSessionId);
    if (!entry || entry.isExpired(Date.now()) || entry.current)
      this.#metrics?.observeSession('resume_failed');
    if (!entry) throw new RpcError('invalidRequest', `unknown session id ${resumeSessionId}`);
    if (entry.isExpired(Date.now())) {
      await this.#expire(entry, 'expired before resume');
      throw new RpcError('invalidRequest', `unknown session id ${resumeSessionId}`);
    }
    if (entry.current) {
      // Refused as the original; but the holder may be a connection that died without a FIN,
      // so check it now: if it is dead it is dropped, and the client's next attempt succeeds.
      if (this.#livenessTimeoutMs > 0 && entry.current.probeLiveness !== undefined) {
        this.#logger.debug('resume of an attached session; checking the holding connection', {
          sessionId: entry.id,
          timeoutMs: this.#livenessTimeoutMs,
        });
        entry.current.probeLiveness(this.#livenessTimeoutMs);
      }
      throw new RpcError(
        'sessionAlreadyAttached',
        `session ${resumeSessionId} is already attached to another connection`,
      );
    }
    const previous = entry.detachedFrom;
    entry.clearTimer();
    entry.current = attachment;
    entry.detachedFrom = undefined;
    entry.expiresAtMs = undefined;
    this.#logger.debug('session resumed', { sessionId: entry.id });
    this.#metrics?.observeSession('resumed');
    previous?.deref()?.evict();
    return new SessionHandle(this, entry, attachment);
  }

  /** @internal Used by {@link SessionHandle.detach}. */
  detach(entry: SessionEntry, attachment: SessionAttachment): void {
    if (entry.current !== attachment || this.#sessions.get(entry.id) !== entry) return;
    entry.current = undefined;
    const detachedFrom = new WeakRef(attachment);
    entry.detachedFrom = detachedFrom;
    entry.expiresAtMs = Date.now() + this.#ttlMs;
    entry.clearTimer();
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (entry.current === undefined && entry.detachedFrom === detachedFrom) {
        void this.#expire(entry, 'detached session TTL elapsed');
      }
    }, this.#ttlMs);
    // A detached session must not keep an embedding process alive on its own.
    entry.timer.unref();
    this.#metrics?.observeSession('detached');
    this.#logger.debug('session detached', { sessionId: entry.id, ttlMs: this.#ttlMs });
  }

  #expire(entry: SessionEntry, reason: string): Promise<void> {
    if (this.#sessions.get(entry.id) === entry) this.#sessions.delete(entry.id);
    entry.clearTimer();
    this.#metrics?.observeSession('expired');
    this.#logger.info('session removed; terminating its processes', { sessionId: entry.id, reason });
    const done = this.#shutdownEntry(entry);
    this.#pendingShutdowns.add(done);
    void done.finally(() => this.#pendingShutdowns.delete(done));
    return done;
  }

  async #shutdownEntry(entry: SessionEntry): Promise<void> {
    entry.subscription[Symbol.dispose]();
    entry.current = undefined;
    try {
      await entry.table.shutdown();
    } catch (error) {
      this.#logger.error('process table shutdown failed', { sessionId: entry.id, error });
    }
  }

  /** Terminates every session's processes (attached or not) and waits for them. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const entries = [...this.#sessions.values()];
      this.#sessions.clear();
      for (const entry of entries) entry.clearTimer();
      await Promise.all([...entries.map((entry) => this.#shutdownEntry(entry)), ...this.#pendingShutdowns]);
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
