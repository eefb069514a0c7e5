import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { decodeParams } from '../methods.ts';
import {
  NetworkPolicyDecisionNotification,
  NetworkPolicyResponse,
  NetworkProxyLaunchConfig,
  NetworkRequest,
  NetworkRequestProtocol,
} from './network.ts';

describe('network schemas', () => {
  test('request protocols are the original snake_case names; decoding accepts newer ones', () => {
    for (const protocol of ['http', 'https_connect', 'socks5_tcp', 'socks5_udp']) {
      expect(v.parse(NetworkRequestProtocol, protocol)).toBe(protocol);
      expect(v.parse(NetworkRequest, { protocol, host: 'example.com', port: 443 }).protocol).toBe(protocol);
    }
    for (const protocol of ['https', 'socks5', 'HTTP', '']) {
      expect(v.safeParse(NetworkRequestProtocol, protocol).success).toBe(false);
    }
    expect(v.parse(NetworkRequest, { protocol: 'quic', host: 'example.com', port: 443 }).protocol).toBe(
      'quic',
    );
    expect(v.safeParse(NetworkRequest, { protocol: 'http', host: 'example.com', port: 70000 }).success).toBe(
      false,
    );
  });

  test('decisions: allow, deny and ask, with or without a reason (the original always sends one)', () => {
    expect(v.parse(NetworkPolicyResponse, { decision: { type: 'allow' } })).toEqual({
      decision: { type: 'allow' },
    });
    expect(v.parse(NetworkPolicyResponse, { decision: { type: 'deny', reason: 'no' } })).toEqual({
      decision: { type: 'deny', reason: 'no' },
    });
    expect(v.parse(NetworkPolicyResponse, { decision: { type: 'ask', reason: null } })).toEqual({
      decision: { type: 'ask' },
    });
    expect(v.safeParse(NetworkPolicyResponse, { decision: { type: 'maybe' } }).success).toBe(false);
    expect(v.safeParse(NetworkPolicyResponse, { decision: 'allow' }).success).toBe(false);
  });

  test('decision notifications: reason and timestamp are optional additions', () => {
    const legacy = {
      processId: 'p',
      request: { protocol: 'http', host: 'example.com', port: 80 },
      decision: 'allow',
      rule: 'allow:example.com',
    };
    expect(v.parse(NetworkPolicyDecisionNotification, legacy)).toEqual(legacy);
    const denied = {
      ...legacy,
      decision: 'deny',
      rule: 'deny:example.com',
      reason: 'denied',
      timestamp: '2025-01-31T12:00:00.000Z',
    };
    expect(v.parse(NetworkPolicyDecisionNotification, denied)).toEqual(denied);
    expect(v.safeParse(NetworkPolicyDecisionNotification, { ...legacy, decision: 'ask' }).success).toBe(
      false,
    );
  });

  test('launch config keeps unknown members (the original form passes through)', () => {
    const config = v.parse(NetworkProxyLaunchConfig, {
      allowedDomains: ['*.npmjs.org'],
      policyDecisionTimeoutMs: 500,
      proxy: { mode: 'full' },
    });
    expect(config).toEqual({
      allowedDomains: ['*.npmjs.org'],
      policyDecisionTimeoutMs: 500,
      proxy: { mode: 'full' },
    });
  });

  test('process/start carries the managed-network fields', () => {
    const params = decodeParams('process/start', {
      processId: 'p',
      argv: ['true'],
      cwd: 'file:///tmp',
      env: {},
      tty: false,
      sandbox: { profile: 'workspace-write', network: 'proxied' },
      enforceManagedNetwork: true,
      managedNetwork: { loopbackPorts: [5432] },
      networkProxy: { allowedDomains: ['example.com'], policyCallbacks: true },
    });
    expect(params.managedNetwork).toEqual({ loopbackPorts: [5432], allowLocalBinding: false });
    expect(params.networkProxy?.policyCallbacks).toBe(true);
    expect(params.sandbox?.network).toBe('proxied');
  });
});
