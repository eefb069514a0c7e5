import { type HttpHeader, RpcError } from '@execd/protocol';
import { AUTH_TOKEN_ENV_VAR } from '../server/auth.ts';

/**
 * Executor variables a client may not read into a header (`valueEnvVar`): the executor's own
 * credentials, as the original's `HTTP_HEADER_ENV_DENYLIST` (compared case-insensitively).
 */
export const HTTP_HEADER_ENV_DENYLIST: readonly string[] = [
  'CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN',
  'OPENAI_FEDERATION_RULE_ID',
  'OPENAI_IDENTITY_TOKEN_FILE',
  'OPENAI_WORKLOAD_IDENTITY_CONTEXT',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'CODEX_ACCESS_TOKEN',
  'CODEX_CONNECTORS_TOKEN',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AZURE_CLIENT_SECRET',
  'AZURE_FEDERATED_TOKEN_FILE',
  'GOOGLE_APPLICATION_CREDENTIALS',
  // execd's own: the token clients authenticate with.
  AUTH_TOKEN_ENV_VAR,
];

/** RFC 9110 `token`: what a method or a header name may consist of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** True when `method` is a valid HTTP method token. */
export function isHttpToken(value: string): boolean {
  return TOKEN.test(value);
}

/** Header value bytes the original's `HeaderValue::from_str` accepts: tab, 0x20..0x7e and non-ASCII. */
function isValidHeaderValue(value: string): boolean {
  return !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value);
}

/** A request header ready for the wire: lower-cased name, value bytes as a latin1 string. */
export type WireHeader = readonly [name: string, value: string];

/**
 * Resolves the request's headers in order: names lower-cased (as the original sends them),
 * `valueEnvVar` appended from the executor's environment `env`. Throws -32602 with the original's
 * texts for a bad name or value, a refused or missing variable, or an empty one.
 */
export function buildRequestHeaders(
  headers: readonly HttpHeader[],
  env: Readonly<Record<string, string | undefined>>,
): WireHeader[] {
  const out: WireHeader[] = [];
  for (const header of headers) {
    if (!isHttpToken(header.name)) {
      throw new RpcError('invalidParams', 'http/request header name is invalid: invalid HTTP header name');
    }
    let value = header.value;
    const variable = header.valueEnvVar;
    if (variable !== undefined) {
      const upper = variable.toUpperCase();
      if (HTTP_HEADER_ENV_DENYLIST.some((denied) => denied === upper)) {
        throw new RpcError(
          'invalidParams',
          `http/request header ${header.name} cannot use executor environment variable ${variable}`,
        );
      }
      const resolved = env[variable];
      if (resolved === undefined) {
        throw new RpcError(
          'invalidParams',
          `http/request header ${header.name} requires executor environment variable ${variable}`,
        );
      }
      if (resolved === '') {
        throw new RpcError(
          'invalidParams',
          `http/request header ${header.name} requires a non-empty executor environment variable ${variable}`,
        );
      }
      value = `${value}${resolved}`;
    }
    if (!isValidHeaderValue(value)) {
      throw new RpcError(
        'invalidParams',
        `http/request header value is invalid for ${header.name}: failed to parse header value`,
      );
    }
    // Node writes header strings as latin1: hand it the UTF-8 bytes so they go out unchanged.
    out.push([header.name.toLowerCase(), Buffer.from(value, 'utf8').toString('latin1')]);
  }
  if (!out.some(([name]) => name === 'accept')) out.push(['accept', '*/*']);
  return groupByName(out);
}

/** Repeated names go together, at the place of the first (the original's `HeaderMap` order). */
function groupByName(headers: readonly WireHeader[]): WireHeader[] {
  const groups = new Map<string, WireHeader[]>();
  for (const header of headers) {
    const group = groups.get(header[0]);
    if (group) group.push(header);
    else groups.set(header[0], [header]);
  }
  return [...groups.values()].flat();
}

/** Response headers as the original reports them: lower-cased names, visible-ASCII values only. */
export function responseHeaders(rawHeaders: readonly string[]): HttpHeader[] {
  const out: HttpHeader[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const value = rawHeaders[i + 1] as string;
    if (/[^\t\u0020-\u007e]/.test(value)) continue;
    out.push({ name: (rawHeaders[i] as string).toLowerCase(), value });
  }
  return out;
}
