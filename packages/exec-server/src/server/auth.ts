import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ExecError } from '@execd/protocol';

/** The environment variable holding the auth token when no `--auth-token-file` is given. */
export const AUTH_TOKEN_ENV_VAR = 'EXECD_AUTH_TOKEN';

/**
 * The one-line body of a 401 answer: what the server wants and what to do about a client that
 * cannot send a token (Codex CLI 0.169.0 sends none). Codex itself shows only the status
 * (`HTTP error: 401 Unauthorized`, with `RUST_LOG=warn`), so the guide explains that status;
 * curl, proxies' logs and anyone reading the raw answer see this text.
 */
export const MISSING_TOKEN_HINT: string =
  'execd-server: a bearer token is required (Authorization: Bearer <token>); ' +
  'for a client that sends none (Codex CLI), use an SSH tunnel or a proxy that adds the header: ' +
  'see "Connecting Codex CLI" in deploy/README.md\n';

/** The one-line body of a 401 answer to a request whose bearer token does not match. */
export const WRONG_TOKEN_HINT: string =
  'execd-server: the bearer token sent (Authorization: Bearer <token>) is not the one this server ' +
  'was started with (--auth-token-file or EXECD_AUTH_TOKEN); check for a stale or truncated token\n';

/** The 401 body for a request with this `Authorization` header: missing or wrong token. */
export function tokenRefusalHint(authorization: string | undefined): string {
  return authorization === undefined ? MISSING_TOKEN_HINT : WRONG_TOKEN_HINT;
}

/**
 * The `WWW-Authenticate` value of a 401 answer (RFC 6750): `invalid_token` when a token was sent
 * and did not match, no error code when none was sent.
 */
export function bearerChallenge(authorization: string | undefined): string {
  return authorization === undefined
    ? 'Bearer realm="execd-server"'
    : 'Bearer realm="execd-server", error="invalid_token"';
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Checks `Authorization: Bearer <token>` headers against one token in constant time: both sides
 * are hashed first, so neither the comparison nor an early length mismatch leaks the token.
 */
export class BearerTokenVerifier {
  readonly #expected: Buffer;

  constructor(token: string) {
    if (token.length === 0) throw new ExecError('invalidParams', 'the auth token must not be empty');
    this.#expected = digest(token);
  }

  /** True when `header` is `Bearer <the token>` (scheme case-insensitive). */
  verify(header: string | undefined): boolean {
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    // Hash something even on a malformed header, so timing does not reveal the header's shape.
    const candidate = digest(match?.[1] ?? '');
    return timingSafeEqual(candidate, this.#expected) && match !== null;
  }
}

/**
 * Resolves the server's auth token: the trimmed contents of `tokenFile` when given, else the
 * `EXECD_AUTH_TOKEN` variable of `env`, else undefined (no auth). An empty token is an error.
 */
export async function loadAuthToken(options: {
  readonly tokenFile?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The flag named in errors (default `--auth-token-file`). */
  readonly flag?: string | undefined;
}): Promise<string | undefined> {
  const flag = options.flag ?? '--auth-token-file';
  if (options.tokenFile !== undefined) {
    let text: string;
    try {
      text = await readFile(options.tokenFile, 'utf8');
    } catch (cause) {
      throw new ExecError(
        'invalidParams',
        `cannot read ${flag} \`${options.tokenFile}\`: ${(cause as Error).message}`,
        {
          cause,
        },
      );
    }
    const token = text.trim();
    if (token.length === 0) throw new ExecError('invalidParams', `${flag} \`${options.tokenFile}\` is empty`);
    return token;
  }
  const fromEnv = options.env?.[AUTH_TOKEN_ENV_VAR]?.trim();
  if (fromEnv === undefined || fromEnv.length === 0) return undefined;
  return fromEnv;
}
