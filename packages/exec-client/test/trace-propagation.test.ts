// W3C trace context: the client puts the active OpenTelemetry span's context in each request's
// `trace` member (read where the call begins), and the server carries it into its request logs.
import { AsyncLocalStorage } from 'node:async_hooks';
import { captureLogger, execParams } from '@execd/test-kit';
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { startTrackedServer } from './helpers/harness.ts';
import { answerInitialize, ScriptedServer } from './helpers/scripted-server.ts';

/** What an OpenTelemetry SDK registers: the active context follows async calls. */
class AsyncContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

/** Runs `fn` with an active (remote, sampled) span context. */
function inSpan<T>(fn: () => Promise<T>): Promise<T> {
  const spanContext = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: true };
  return context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), fn);
}

beforeAll(() => {
  context.setGlobalContextManager(new AsyncContextManager());
});
afterAll(() => {
  context.disable();
});

describe('trace propagation', () => {
  test('requests inside a span carry its traceparent; others carry no trace member', async () => {
    await using server = await ScriptedServer.start((peer, message) => {
      if (answerInitialize(peer, message)) return;
      if (message.method === 'environment/status') peer.respond(message.id, { status: 'ready' });
    });
    await using client = await ExecServerClient.connect({ url: server.url, codec: 'json' });
    await inSpan(() => client.environmentStatus());
    await client.environmentStatus();
    const received = server.peers[0]!.received.filter((m) => m.method === 'environment/status');
    expect(received.map((m) => m.trace)).toEqual([{ traceparent: TRACEPARENT }, undefined]);
    expect(received[1]).not.toHaveProperty('trace');
    expect(server.peers[0]!.received[0]).not.toHaveProperty('trace');
  });

  test('the context is read where the call begins, not when it is sent', async () => {
    await using server = await ScriptedServer.start((peer, message) => {
      if (answerInitialize(peer, message)) return;
      if (message.method === 'environment/status') peer.respond(message.id, { status: 'ready' });
    });
    await using client = await ExecServerClient.connect({ url: server.url, codec: 'json' });
    // Started inside the span, awaited outside it.
    const pending = inSpan(async () => client.environmentStatus());
    await pending;
    const received = server.peers[0]!.received.filter((m) => m.method === 'environment/status');
    expect(received[0]?.trace).toEqual({ traceparent: TRACEPARENT });
  });

  test('a real server logs the traceparent with the request', async () => {
    const { logger, records } = captureLogger();
    const server = await startTrackedServer({ logger });
    try {
      await using client = await ExecServerClient.connect({ url: server.url });
      await inSpan(() => client.start(execParams('traced', ['true'])));
    } finally {
      await server.close();
    }
    const requestIn = records.find((r) => r.message === 'request in' && r.fields?.method === 'process/start');
    expect(requestIn?.fields).toMatchObject({ traceparent: TRACEPARENT });
    const others = records.filter((r) => r.message === 'request in' && r.fields?.method === 'initialize');
    expect(others[0]?.fields).not.toHaveProperty('traceparent');
  });
});
