import { ExecError } from '@execd/protocol';
import { expect, test } from 'vitest';
import { policyFromLaunchConfig } from './launch-config.ts';

test('maps the launch config and the managed network', () => {
  expect(
    policyFromLaunchConfig(
      { allowedDomains: ['*.npmjs.org'], deniedDomains: ['evil.test'] },
      { loopbackPorts: [8080], allowLocalBinding: false },
    ),
  ).toEqual({
    allowedDomains: ['*.npmjs.org'],
    deniedDomains: ['evil.test'],
    loopbackPorts: [8080],
    useDecider: false,
    deciderTimeoutMs: undefined,
  });
});

test('callbacks are on with policyCallbacks or a timeout', () => {
  expect(policyFromLaunchConfig({ policyCallbacks: true }, undefined)).toMatchObject({
    useDecider: true,
    deciderTimeoutMs: 30_000,
  });
  expect(policyFromLaunchConfig({ policyDecisionTimeoutMs: 250 }, undefined)).toMatchObject({
    useDecider: true,
    deciderTimeoutMs: 250,
  });
  expect(policyFromLaunchConfig(undefined, undefined)).toMatchObject({
    useDecider: false,
    allowedDomains: [],
  });
});

test('a zero timeout is invalid params', () => {
  expect(() => policyFromLaunchConfig({ policyDecisionTimeoutMs: 0 }, undefined)).toThrow(
    expect.toSatisfy((error) => ExecError.is(error) && error.code === 'invalidParams'),
  );
});
