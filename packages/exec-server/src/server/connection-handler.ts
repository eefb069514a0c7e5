import { setMaxListeners } from 'node:events';
import {
  decodeParams,
  type EnvironmentInfo,
  ExecError,
  type InitializeResponse,
  isMethodName,
  type Logger,
  METHODS,
  NOOP_LOGGER,
  RpcError,
} from '@execd/protocol';
import { discoverCapabilityRoots } from '../capability/discover-roots.ts';
import { readEnvironmentConfig } from '../config/read-environment-config.ts';
import { FsConnection, isFsRequest } from '../fs/fs-connection.ts';
import { LocalFileSystem } from '../fs/local-file-system.ts';
import { HttpRequests } from '../http/http-requests.ts';
import type { NetworkPolicyRequester } from '../local/process-network.ts';
import type { ConnectionNotification, ProcessNotification } from '../types.ts';
import type { SessionAttachment, SessionHandle, SessionRegistry } from './session-registry.ts';

/** Options of {@link ConnectionHandler}. */
export interface ConnectionHandlerOptions {
  readonly registry: SessionRegistry;
  /** Where the attached session's process notifications, and the connection's own, go. */
  readonly notify: (notification: ProcessNotification | ConnectionNotification) => void;
  /** Describes this executor (for `environment/info` and the `initialize` result). */
  readonly environmentInfo: () => EnvironmentInfo;
  /** Fires when the connection goes away: long-polls in flight are abandoned. */
  readonly cancelSignal?: AbortSignal;
  /** Sends `network/policyRequest` to this connection's client (for the attached session's processes). */
  readonly requestNetworkPolicy?: NetworkPolicyRequester | undefined;
  /** Pings this connection's peer and drops the connection without an answer in time (resume check). */
  readonly probeLiveness?: ((timeoutMs: number) => void) | undefined;
  /**
   * The executor's own environment: `valueEnvVar` of `http/request`, `CODEX_HOME`/`HOME` of
   * `environmentConfig/read` (default `process.env`).
   */
  readonly executorEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /** Folder of the system config layers of `environmentConfig/read` (default `/etc/codex`). */
  readonly systemConfigDir?: string | undefined;
  readonly logger?: Logger;
}

const RESUMED_ELSEWHERE = 'session has been resumed by another connection';

/** The host filesystem the `fs/*` methods run on (stateless; per-connection state is `FsConnection`). */
const LOCAL_FILE_SYSTEM = new LocalFileSystem();

function methodNotFound(method: string): RpcError {
  return new RpcError('methodNotFound', `exec-server stub does not implement \`${method}\` yet`);
}

/**
 * The per-connection protocol state of spec §2.3: `initialize` once, then `initialized`, then
 * methods, each routed to the attached session's process table. Transport-free, so the handshake
 * and resume rules are tested without sockets.
 *
 * ```
 *  fresh ──initialize ok──> initializing ──initialized──> ready
 *    ^          │                                            │
 *    └─ failed ─┘            detach (disconnect) / resumed elsewhere ──> gone
 * ```
 */
export class ConnectionHandler {
  readonly #registry: SessionRegistry;
  readonly #environmentInfo: () => EnvironmentInfo;
  readonly #logger: Logger;
  /** Aborted when the connection goes away or another connection resumes the session. */
  readonly #cancel = new AbortController();
  readonly #attachment: SessionAttachment;
  /** Made by the first `http/request` (two keep-alive agents: most connections never ask). */
  #httpRequests: HttpRequests | undefined;
  readonly #notify: ConnectionHandlerOptions['notify'];
  /** The connection's `fs/*` state: open file handles and its missing-path watch. */
  readonly #fs: FsConnection;
  readonly #executorEnv: ConnectionHandlerOptions['executorEnv'];
  readonly #systemConfigDir: string | undefined;
  #initializeRequested = false;
  #initialized = false;
  #detached = false;
  /** The connection's outbound backlog is over its pause mark (see `setOutboundCongested`). */
  #congested = false;
  #session: SessionHandle | undefined;
  /** The client opted in to `process/waitingForInput` at `initialize` (an execd extension). */
  #waitingForInput = false;

  constructor(options: ConnectionHandlerOptions) {
    this.#registry = options.registry;
    this.#environmentInfo = options.environmentInfo;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#attachment = {
      // Extension notifications only reach a client that asked for them.
      notify: (notification) => {
        if (notification.method !== 'process/waitingForInput' || this.#waitingForInput) {
          options.notify(notification);
        }
      },
      evict: () => this.#cancel.abort(new RpcError('invalidRequest', RESUMED_ELSEWHERE)),
      requestNetworkPolicy: options.requestNetworkPolicy,
      probeLiveness: options.probeLiveness,
    };
    this.#executorEnv = options.executorEnv;
    this.#systemConfigDir = options.systemConfigDir;
    this.#notify = options.notify;
    // Every in-flight long-poll of the connection listens on this one signal (up to 2N at once).
    this.#fs = new FsConnection({
      fileSystem: LOCAL_FILE_SYSTEM,
      notify: (params) => options.notify({ method: 'fs/missingChanged', params }),
      logger: this.#logger,
    });
    // Handles and the watch belong to the connection (as the original's): released when it ends.
    this.#cancel.signal.addEventListener('abort', () => void this.#fs.close(), { once: true });
    setMaxListeners(0, this.#cancel.signal);
    const cancelSignal = options.cancelSignal;
    if (cancelSignal?.aborted) this.#cancel.abort(cancelSignal.reason);
    cancelSignal?.addEventListener('abort', () => this.#cancel.abort(cancelSignal.reason), { once: true });
  }

  /** True once `initialized` was accepted: from then on requests may run concurrently. */
  get ready(): boolean {
    return this.#initialized;
  }

  /** The attached session's id, once `initialize` succeeded. */
  get sessionId(): string | undefined {
    return this.#session?.sessionId;
  }

  #http(): HttpRequests {
    if (this.#httpRequests === undefined) {
      this.#httpRequests = new HttpRequests({
        notify: (params) => this.#notify({ method: 'http/request/bodyDelta', params }),
        env: this.#executorEnv,
        cancelSignal: this.#cancel.signal,
        logger: this.#logger,
      });
      if (this.#congested) this.#httpRequests.setCongested(true);
    }
    return this.#httpRequests;
  }

  /** False when another connection took the session over; the connection should then end. */
  isSessionAttached(): boolean {
    return this.#session === undefined || this.#session.isAttached();
  }

  /**
   * Handles one request and returns its result. Throws `RpcError` with the original's codes:
   * -32601 unknown method, -32602 bad params, -32600 handshake order, plus the table's errors.
   */
  async handleRequest(method: string, rawParams: unknown): Promise<unknown> {
    if (!isMethodName(method)) throw methodNotFound(method);
    const entry = METHODS[method] as { type: string; from: string; family?: string };
    if (entry.type !== 'request' || entry.from !== 'client') throw methodNotFound(method);
    if (isFsRequest(method))
      return this.#fs.handle(method, rawParams, () => this.#requireReadyFor('filesystem'));
    switch (method) {
      case 'initialize': {
        const params = decodeParams(method, rawParams);
        if (!this.#initializeRequested) this.#waitingForInput = params.waitingForInput === true;
        return this.#initialize(params.resumeSessionId);
      }
      case 'process/start': {
        const params = decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.start(params);
      }
      case 'process/read': {
        const params = decodeParams(method, rawParams);
        const session = this.#requireReadyFor('exec');
        try {
          const response = await session.table.read(params, this.#cancel.signal);
          this.#requireAttached();
          if (!this.#waitingForInput) delete response.waitingForInput;
          return response;
        } catch (error) {
          this.#requireAttached();
          throw error;
        }
      }
      case 'process/write': {
        const params = decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.write(params);
      }
      case 'process/signal': {
        const params = decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.signal(params);
      }
      case 'process/terminate': {
        const params = decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.terminate(params);
      }
      case 'process/resize': {
        const params = decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.resize(params);
      }
      case 'process/list':
        decodeParams(method, rawParams);
        return this.#requireReadyFor('exec').table.list();
      case 'environment/info':
        decodeParams(method, rawParams);
        this.#requireReadyFor('environment info');
        return this.#environmentInfo();
      case 'environment/status':
        decodeParams(method, rawParams);
        this.#requireReadyFor('environment status');
        return { status: 'ready' };
      case 'environmentConfig/read': {
        const params = decodeParams(method, rawParams);
        this.#requireReadyFor('environment config');
        return readEnvironmentConfig(params, {
          env: this.#executorEnv,
          systemConfigDir: this.#systemConfigDir,
        });
      }
      case 'capabilityRoots/discoverV1': {
        const params = decodeParams(method, rawParams);
        this.#requireReadyFor('capability discovery');
        return discoverCapabilityRoots(params);
      }
      case 'http/request': {
        const params = decodeParams(method, rawParams);
        this.#requireReadyFor('http');
        return this.#http().request(params);
      }
      default:
        throw methodNotFound(method);
    }
  }

  /**
   * Handles the `initialized` notification. Throws `ExecError` (`protocol`) when it is out of
   * order; the caller then closes the connection, as the original does.
   */
  initialized(): void {
    if (!this.#initializeRequested) {
      throw new ExecError('protocol', 'received `initialized` notification before `initialize`');
    }
    if (!this.#session) throw new ExecError('protocol', 'client must call initialize before using methods');
    if (!this.#session.isAttached()) throw new ExecError('protocol', RESUMED_ELSEWHERE);
    this.#initialized = true;
  }

  /**
   * Flow control from the transport: while congested, the attached session's process table holds
   * its children's output back (they block on full pipes); nothing is dropped. Only the attached
   * connection steers its session's table.
   */
  setOutboundCongested(congested: boolean): void {
    if (this.#congested === congested) return;
    this.#congested = congested;
    this.#httpRequests?.setCongested(congested);
    const session = this.#session;
    if (session?.isAttached() && !this.#detached) session.table.setOutputPaused?.(congested);
  }

  /**
   * The connection went away: detach the session (its TTL starts). Its processes' output flows
   * again (into retention, as the original's for a detached session). Idempotent.
   */
  detach(): void {
    this.#detached = true;
    void this.#fs.close();
    const session = this.#session;
    if (session?.isAttached()) session.table.setOutputPaused?.(false);
    session?.detach();
  }

  async #initialize(resumeSessionId: string | undefined): Promise<InitializeResponse> {
    if (this.#initializeRequested) {
      throw new RpcError('invalidRequest', 'initialize may only be sent once per connection');
    }
    this.#initializeRequested = true;
    let session: SessionHandle;
    try {
      session = await this.#registry.attach(resumeSessionId, this.#attachment);
    } catch (error) {
      // A failed initialize may be retried on the same connection.
      this.#initializeRequested = false;
      throw error;
    }
    this.#session = session;
    // The connection may have dropped while attaching; never leave a session attached to nobody.
    if (this.#detached) session.detach();
    else if (this.#congested) session.table.setOutputPaused?.(true);
    this.#logger.debug('session attached', {
      sessionId: session.sessionId,
      resumed: resumeSessionId !== undefined,
    });
    return { sessionId: session.sessionId, environmentInfo: this.#environmentInfo() };
  }

  #requireAttached(): SessionHandle {
    const session = this.#session;
    if (!session) throw new RpcError('invalidRequest', 'client must call initialize before using methods');
    if (!session.isAttached()) throw new RpcError('invalidRequest', RESUMED_ELSEWHERE);
    return session;
  }

  #requireReadyFor(family: string): SessionHandle {
    if (!this.#initializeRequested) {
      throw new RpcError('invalidRequest', `client must call initialize before using ${family} methods`);
    }
    const session = this.#requireAttached();
    if (!this.#initialized) {
      throw new RpcError('invalidRequest', `client must send initialized before using ${family} methods`);
    }
    return session;
  }
}
