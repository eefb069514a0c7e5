import type { NetworkDenialReason } from '@execd/protocol/contract';

/** The sentence people see for a denial (403 body, denial record, logs). */
export function denialMessage(
  reason: NetworkDenialReason,
  target: string,
  detail: string | undefined,
): string {
  const suffix = detail ? `: ${detail}` : '';
  switch (reason) {
    case 'denied':
      return `${target} is denied by the network policy${suffix}`;
    case 'notAllowed':
      return `${target} is not in the network allow list`;
    case 'notAllowedLocal':
      return `${target} is a local or private address that the network policy does not allow${suffix}`;
    case 'invalidHost':
      return `${target} is not a valid destination`;
    case 'deciderDenied':
      return `${target} was denied by the network policy decider${suffix}`;
    case 'deciderAsk':
      return `${target} needs approval before the command may connect${suffix}`;
    case 'deciderTimeout':
      return `no network policy decision for ${target}${suffix}`;
    case 'deciderFailed':
      return `the network policy decider failed for ${target}${suffix}`;
    case 'proxyClosed':
      return `the network proxy closed before ${target} was decided`;
  }
}

/** The original's `x-proxy-error` header value for a denial reason. */
export function proxyErrorHeader(reason: NetworkDenialReason): string {
  if (reason === 'denied') return 'blocked-by-denylist';
  if (reason === 'notAllowed') return 'blocked-by-allowlist';
  return 'blocked-by-policy';
}

/** `host:port`, with brackets around IPv6 literals. */
export function formatTarget(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
