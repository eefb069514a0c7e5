import { STATUS_CODES } from 'node:http';
import type { NetworkDenial } from '@execd/protocol/contract';
import { proxyErrorHeader } from '../internal/messages.ts';

/** Headers of every response the proxy itself produces. */
const PROXY_AGENT = 'execd-network-proxy';

/** A response the proxy produces itself (denials and gateway errors). */
export interface ProxyResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** 403 for a denied request: the body names the host and the reason; `x-proxy-error` as the original. */
export function denialResponse(denial: NetworkDenial): ProxyResponse {
  return {
    status: 403,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'x-proxy-error': proxyErrorHeader(denial.reason),
      'x-execd-denial-reason': denial.reason,
      'proxy-agent': PROXY_AGENT,
    },
    body: `execd network proxy: ${denial.message} (reason: ${denial.reason}, rule: ${denial.rule})\n`,
  };
}

/** A proxy-generated error (400 bad request, 502 upstream unreachable, ...). */
export function errorResponse(status: number, message: string): ProxyResponse {
  return {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'proxy-agent': PROXY_AGENT },
    body: `execd network proxy: ${message}\n`,
  };
}

/** The raw HTTP/1.1 bytes of a response, for sockets no longer owned by the HTTP parser (CONNECT, upgrade). */
export function rawResponse(response: ProxyResponse): string {
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? 'Error'}`];
  for (const [name, value] of Object.entries(response.headers)) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${Buffer.byteLength(response.body)}`, 'connection: close', '', response.body);
  return lines.join('\r\n');
}
