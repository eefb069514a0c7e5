/** Addresses the command reaches without the proxy: its own loopback inside the sandbox. */
export const NO_PROXY_HOSTS = 'localhost,127.0.0.1,::1';

/** Marker set for commands whose network goes through the managed proxy (as the original). */
export const NETWORK_PROXY_ACTIVE_ENV = 'CODEX_NETWORK_PROXY_ACTIVE';

/**
 * The environment that steers clients to the bridge inside the sandbox: `HTTP_PROXY`,
 * `HTTPS_PROXY` (HTTP proxy, `CONNECT` for https), `ALL_PROXY` (`socks5h://`: the proxy resolves
 * names), their lower-case twins, `NO_PROXY`, the `CODEX_NETWORK_PROXY_ACTIVE=1` marker and
 * `NODE_USE_ENV_PROXY=1` (Node ≥ 22.21 / 24 then honours the variables in `fetch` and `http`).
 */
export function proxyEnvironment(ports: {
  readonly httpPort: number;
  readonly socksPort: number;
}): Record<string, string> {
  const http = `http://127.0.0.1:${ports.httpPort}`;
  const socks = `socks5h://127.0.0.1:${ports.socksPort}`;
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    ALL_PROXY: socks,
    http_proxy: http,
    https_proxy: http,
    all_proxy: socks,
    NO_PROXY: NO_PROXY_HOSTS,
    no_proxy: NO_PROXY_HOSTS,
    [NETWORK_PROXY_ACTIVE_ENV]: '1',
    NODE_USE_ENV_PROXY: '1',
  };
}
