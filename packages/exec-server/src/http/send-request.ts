import { type Agent, type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { WireHeader } from './request-headers.ts';

/** Redirects followed before giving up (reqwest's default policy, which the original uses). */
export const MAX_REDIRECTS = 10;

/** Statuses that redirect when they carry a `Location`. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Headers dropped when a redirect leaves the origin (they would leak credentials). */
const CROSS_ORIGIN_DROPPED: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'proxy-authorization',
  'www-authenticate',
]);

/** Headers that describe a body, dropped when a redirect turns the request into a GET. */
const BODY_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'content-type',
  'content-encoding',
  'content-language',
  'content-location',
  'transfer-encoding',
]);

/** Why no response came back; the caller turns it into the original's text. */
export class SendFailure extends Error {
  constructor(
    readonly kind: 'send' | 'tooManyRedirects' | 'redirect',
    /** The URL being sent when it failed (no fragment). */
    readonly url: string,
    options?: ErrorOptions,
  ) {
    super(
      kind === 'tooManyRedirects' ? 'too many redirects' : `error sending request for url (${url})`,
      options,
    );
    this.name = 'SendFailure';
  }
}

/** One request to send. */
export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: readonly WireHeader[];
  readonly body: Uint8Array | undefined;
  readonly followRedirects: boolean;
  /** Aborts the exchange (timeout, connection gone); the request and response are destroyed. */
  readonly signal: AbortSignal;
  /** The connection pools (keep-alive) of the `http:` and `https:` requests. */
  readonly agents: { readonly http: Agent; readonly https: HttpsAgent };
}

function withoutFragment(url: URL): URL {
  const copy = new URL(url.href);
  copy.hash = '';
  return copy;
}

function sendOnce(
  request: OutgoingRequest,
  method: string,
  url: URL,
  headers: readonly WireHeader[],
  body: Uint8Array | undefined,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const flat: string[] = [];
    for (const [name, value] of headers) flat.push(name, value);
    // Node adds no `Host` to headers given as a list; the original sends it last.
    if (!headers.some(([name]) => name === 'host')) flat.push('host', url.host);
    if (body !== undefined && !headers.some(([name]) => name === 'content-length')) {
      flat.push('content-length', String(body.byteLength));
    }
    let req: ClientRequest;
    try {
      const options = { method, headers: flat, signal: request.signal };
      req = https
        ? httpsRequest(url, { ...options, agent: request.agents.https })
        : httpRequest(url, { ...options, agent: request.agents.http });
    } catch (error) {
      reject(error);
      return;
    }
    req.once('response', resolve);
    req.once('error', reject);
    req.end(body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
}

/**
 * Sends a request and returns the final response (headers read, body unread), following
 * redirects as reqwest does when asked: at most {@link MAX_REDIRECTS}, 301/302 turn a POST into a
 * GET and 303 anything but HEAD, the body goes only with 307/308, a `referer` names the previous
 * URL, and credentials are dropped when the origin changes. Rejects with a {@link SendFailure}.
 */
export async function sendRequest(request: OutgoingRequest): Promise<IncomingMessage> {
  let method = request.method;
  let url = withoutFragment(request.url);
  let headers = [...request.headers];
  let body = request.body;
  for (let redirects = 0; ; redirects += 1) {
    let response: IncomingMessage;
    try {
      response = await sendOnce(request, method, url, headers, body);
    } catch (error) {
      throw new SendFailure('send', url.href, { cause: error });
    }
    const location = response.headers.location;
    if (!request.followRedirects || !REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location) {
      return response;
    }
    // The redirect's own body is not wanted.
    response.resume();
    if (redirects >= MAX_REDIRECTS) throw new SendFailure('tooManyRedirects', url.href);
    let next: URL;
    try {
      next = withoutFragment(new URL(location, url));
    } catch (error) {
      throw new SendFailure('redirect', url.href, { cause: error });
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new SendFailure('redirect', url.href);
    const status = response.statusCode ?? 0;
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = headers.filter(([name]) => !BODY_HEADERS.has(name));
    }
    if (next.origin !== url.origin) headers = headers.filter(([name]) => !CROSS_ORIGIN_DROPPED.has(name));
    headers = headers.filter(([name]) => name !== 'referer');
    if (!(url.protocol === 'https:' && next.protocol === 'http:')) {
      const referer = new URL(url.href);
      referer.username = '';
      referer.password = '';
      headers.unshift(['referer', referer.href]);
    }
    url = next;
  }
}
