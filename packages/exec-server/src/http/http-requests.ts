import { Agent, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  ChangeSignal,
  type HttpRequestBodyDeltaNotification,
  type HttpRequestParams,
  type HttpRequestResponse,
  type Logger,
  NOOP_LOGGER,
  RpcError,
} from '@execd/protocol';
import { buildRequestHeaders, isHttpToken, responseHeaders } from './request-headers.ts';
import { SendFailure, sendRequest } from './send-request.ts';

/** Largest body piece in one `http/request/bodyDelta` (the original's `MAX_HTTP_BODY_DELTA_BYTES`). */
export const MAX_HTTP_BODY_DELTA_BYTES: number = 1024 * 1024;

/**
 * Largest body a buffered (`streamResponse: false`) request returns. The original has no cap;
 * execd keeps memory bounded: the body travels in one frame, and a larger one should be streamed.
 */
export const HTTP_BUFFERED_BODY_MAX_BYTES: number = 64 * 1024 * 1024;

/** The original's (reqwest's) text for a body that ended early: reset, timed out, cut short. */
const BODY_ERROR = 'error decoding response body';

/** Options of {@link HttpRequests}. */
export interface HttpRequestsOptions {
  /** Sends one `http/request/bodyDelta` to this connection's client. */
  readonly notify: (params: HttpRequestBodyDeltaNotification) => void;
  /** The executor's own environment, where `valueEnvVar` is looked up (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Fires when the connection goes away: every request and stream in flight is dropped. */
  readonly cancelSignal: AbortSignal;
  readonly logger?: Logger | undefined;
}

/** Parses the URL as the original does: only absolute `http:`/`https:` URLs. */
function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    const reason = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(raw) ? 'invalid URL' : 'relative URL without a base';
    throw new RpcError('invalidParams', `http/request url is invalid: ${reason}`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RpcError(
      'invalidParams',
      `http/request only supports http and https URLs, got ${url.protocol.slice(0, -1)}`,
    );
  }
  return url;
}

/**
 * The `http/request` method of one connection (spec §2.4): the executor makes the request from
 * its own host, so a client reaches what the executor reaches, loopback included (the original
 * does the same; the managed network's own-ports guard is for sandboxed commands, and a client
 * that may call `process/start` could reach those ports anyway). Buffered bodies come back in
 * the result; streamed ones as ordered `http/request/bodyDelta` notifications after it, read
 * only as fast as the connection sends them.
 */
export class HttpRequests {
  readonly #notify: HttpRequestsOptions['notify'];
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #cancelSignal: AbortSignal;
  readonly #logger: Logger;
  /** Request ids of streams until their last delta went out. */
  readonly #activeStreams = new Set<string>();
  readonly #flowing = new ChangeSignal();
  /** Keep-alive pools of this connection's requests, destroyed with it. */
  readonly #agents = { http: new Agent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  #congested = false;

  constructor(options: HttpRequestsOptions) {
    this.#notify = options.notify;
    this.#env = options.env ?? process.env;
    this.#cancelSignal = options.cancelSignal;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#cancelSignal.addEventListener(
      'abort',
      () => {
        this.#flowing.notify();
        this.#agents.http.destroy();
        this.#agents.https.destroy();
      },
      { once: true },
    );
  }

  /** Streams in flight (for tests and leak checks). */
  get activeStreams(): number {
    return this.#activeStreams.size;
  }

  /** The connection's outbound backlog is over (`true`) or back under (`false`) its pause mark. */
  setCongested(congested: boolean): void {
    this.#congested = congested;
    if (!congested) this.#flowing.notify();
  }

  /** Runs one `http/request`. Throws `RpcError` with the original's codes and texts. */
  async request(params: HttpRequestParams): Promise<HttpRequestResponse> {
    if (!isHttpToken(params.method)) {
      throw new RpcError('invalidParams', 'http/request method is invalid: invalid HTTP method');
    }
    const url = parseUrl(params.url);
    const headers = buildRequestHeaders(params.headers, this.#env);
    const stream = params.streamResponse;
    if (stream) {
      if (this.#activeStreams.has(params.requestId)) {
        throw new RpcError(
          'invalidParams',
          `http/request streamResponse requestId \`${params.requestId}\` is already active`,
        );
      }
      this.#activeStreams.add(params.requestId);
    }
    // One signal ends the exchange: the deadline (body included) or the connection going away.
    const exchange = new AbortController();
    const abort = (): void => exchange.abort();
    this.#cancelSignal.addEventListener('abort', abort, { once: true });
    const timer =
      params.timeoutMs === undefined ? undefined : setTimeout(() => exchange.abort(), params.timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      this.#cancelSignal.removeEventListener('abort', abort);
      if (stream) this.#activeStreams.delete(params.requestId);
    };
    let response: IncomingMessage;
    try {
      response = await sendRequest({
        method: params.method,
        url,
        headers,
        body: params.bodyBase64,
        followRedirects: params.redirectPolicy === 'follow',
        signal: exchange.signal,
        agents: this.#agents,
      });
    } catch (error) {
      finish();
      if (error instanceof SendFailure) {
        throw new RpcError('internal', `http/request failed: ${error.message}`, { cause: error });
      }
      throw error;
    }
    const head = { status: response.statusCode ?? 0, headers: responseHeaders(response.rawHeaders) };
    if (!stream) {
      try {
        return { ...head, bodyBase64: await this.#readBody(response) };
      } finally {
        finish();
      }
    }
    // The result goes out first: the processor sends it before the next macrotask.
    setImmediate(() => {
      void this.#streamBody(params.requestId, response).finally(finish);
    });
    return { ...head, bodyBase64: new Uint8Array(0) };
  }

  async #readBody(response: IncomingMessage): Promise<Uint8Array> {
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        total += chunk.byteLength;
        if (total > HTTP_BUFFERED_BODY_MAX_BYTES) {
          response.destroy();
          throw new RpcError(
            'internal',
            `failed to read http/request response body: body exceeds ${HTTP_BUFFERED_BODY_MAX_BYTES} bytes; use streamResponse`,
          );
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof RpcError) throw error;
      throw new RpcError('internal', `failed to read http/request response body: ${BODY_ERROR}`, {
        cause: error,
      });
    }
    return Buffer.concat(chunks, total);
  }

  /** Waits while the connection is congested; false once it went away. */
  async #whenFlowing(): Promise<boolean> {
    while (this.#congested && !this.#cancelSignal.aborted) await this.#flowing.wait(1_000);
    return !this.#cancelSignal.aborted;
  }

  async #streamBody(requestId: string, response: IncomingMessage): Promise<void> {
    let seq = 1;
    const send = (delta: Uint8Array, done: boolean, error: string | null): void => {
      this.#notify({ requestId, seq, deltaBase64: delta, done, error });
      seq += 1;
    };
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        for (let offset = 0; offset < chunk.byteLength; offset += MAX_HTTP_BODY_DELTA_BYTES) {
          // Reading stops while the client is behind: the server's socket then pushes back.
          if (!(await this.#whenFlowing())) {
            response.destroy();
            return;
          }
          send(chunk.subarray(offset, offset + MAX_HTTP_BODY_DELTA_BYTES), false, null);
        }
      }
    } catch (error) {
      if (this.#cancelSignal.aborted) return;
      this.#logger.debug('http/request body stream failed', { requestId, error });
      send(new Uint8Array(0), true, BODY_ERROR);
      return;
    }
    if (!this.#cancelSignal.aborted) send(new Uint8Array(0), true, null);
  }
}
