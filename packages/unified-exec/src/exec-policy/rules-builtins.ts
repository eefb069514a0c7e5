import type { Decision, NetworkRule, NetworkRuleProtocol } from './policy.ts';

/** A literal argument of a rules-file call. */
export type RuleValue = string | number | boolean | null | RuleValue[];

// The `network_rule` and `host_executable` builtins of `.rules` files (the original's
// `policy_builtins`): their arguments checked and normalised as the original does, with its texts.

function requiredString(
  args: Record<string, RuleValue>,
  key: string,
  call: string,
  fail: (d: string) => never,
): string {
  const value = args[key];
  if (typeof value !== 'string') return fail(`${call}() requires a string \`${key}\``);
  return value;
}

function optionalJustification(
  args: Record<string, RuleValue>,
  fail: (d: string) => never,
): string | undefined {
  const justification = args.justification;
  if (justification === undefined || justification === null) return undefined;
  if (typeof justification !== 'string' || justification.trim().length === 0) {
    return fail('justification cannot be empty');
  }
  return justification;
}

const NETWORK_PROTOCOLS: Record<string, NetworkRuleProtocol> = {
  http: 'http',
  https: 'https',
  https_connect: 'https',
  'http-connect': 'https',
  socks5_tcp: 'socks5_tcp',
  socks5_udp: 'socks5_udp',
};

export function networkRule(args: Record<string, RuleValue>, fail: (detail: string) => never): NetworkRule {
  const host = normalizeNetworkRuleHost(requiredString(args, 'host', 'network_rule', fail), fail);
  const rawProtocol = requiredString(args, 'protocol', 'network_rule', fail);
  const protocol =
    NETWORK_PROTOCOLS[rawProtocol] ??
    fail(`network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got ${rawProtocol})`);
  const rawDecision = requiredString(args, 'decision', 'network_rule', fail);
  const decision: Decision =
    rawDecision === 'deny'
      ? 'forbidden'
      : rawDecision === 'allow' || rawDecision === 'prompt' || rawDecision === 'forbidden'
        ? rawDecision
        : fail(`invalid decision: ${rawDecision}`);
  return { host, protocol, decision, justification: optionalJustification(args, fail) };
}

/**
 * A network rule's host as the original normalises it: no scheme, path, query or fragment; a
 * port (`host:443`, `[::1]:8080`) dropped; trailing dots dropped; lower case; no wildcard.
 */
export function normalizeNetworkRuleHost(raw: string, fail: (detail: string) => never): string {
  let host = raw.trim();
  if (host.length === 0) return fail('network_rule host cannot be empty');
  if (/:\/\/|[/?#]/.test(host)) {
    return fail('network_rule host must be a hostname or IP literal (without scheme or path)');
  }
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end === -1) return fail('network_rule host has an invalid bracketed IPv6 literal');
    const rest = host.slice(end + 1);
    if (rest.length > 0 && !/^:[0-9]+$/.test(rest)) {
      return fail(`network_rule host has an invalid port suffix: ${raw.trim()}`);
    }
    host = host.slice(1, end);
  } else if (host.split(':').length === 2) {
    const [name, port] = host.split(':') as [string, string];
    if (!/^[0-9]+$/.test(port)) return fail(`network_rule host has an invalid port suffix: ${raw.trim()}`);
    host = name;
  }
  const normalized = host.replace(/\.+$/, '').trim().toLowerCase();
  if (normalized.length === 0) return fail('network_rule host cannot be empty');
  if (normalized.includes('*')) {
    return fail('network_rule host must be a specific host; wildcards are not allowed');
  }
  if (/\s/.test(normalized)) return fail('network_rule host cannot contain whitespace');
  return normalized;
}

export function hostExecutable(
  args: Record<string, RuleValue>,
  fail: (detail: string) => never,
): [string, readonly string[]] {
  const name = requiredString(args, 'name', 'host_executable', fail);
  if (name.length === 0) return fail('host_executable name cannot be empty');
  if (name.includes('/') || name === '.' || name === '..') {
    return fail(`host_executable name must be a bare executable name (got ${name})`);
  }
  const rawPaths = args.paths;
  if (!Array.isArray(rawPaths)) return fail('host_executable() requires a `paths` list');
  const paths: string[] = [];
  for (const raw of rawPaths) {
    if (typeof raw !== 'string') return fail('host_executable paths must be strings');
    if (!raw.startsWith('/')) return fail(`host_executable paths must be absolute (got ${raw})`);
    if (raw.slice(raw.lastIndexOf('/') + 1) !== name) {
      return fail(`host_executable path \`${raw}\` must have basename \`${name}\``);
    }
    if (!paths.includes(raw)) paths.push(raw);
  }
  return [name, paths];
}
