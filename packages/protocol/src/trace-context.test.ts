import { describe, expect, test } from 'vitest';
import { readTraceContext } from './trace-context.ts';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('readTraceContext', () => {
  test('reads a well-formed context, with or without tracestate', () => {
    expect(readTraceContext({ traceparent: PARENT })).toEqual({ traceparent: PARENT });
    expect(readTraceContext({ traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE' })).toEqual({
      traceparent: PARENT,
      tracestate: 'congo=t61rcWkgMzE',
    });
  });

  test.each([
    undefined,
    null,
    'x',
    {},
    { traceparent: 7 },
    { traceparent: PARENT.toUpperCase() },
    { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
    { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01' },
    { traceparent: `${PARENT}-extra` },
  ])('ignores %j', (trace) => {
    expect(readTraceContext(trace)).toBeUndefined();
  });
});
