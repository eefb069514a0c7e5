// The connection loop fed with decoded messages through an in-memory transport (no sockets):
// ordering, inbound back-pressure, and what happens to work in flight at disconnect.

import {
  type CodecName,
  type EnvironmentInfo,
  notificationMessage,
  type RpcMessage,
  requestMessage,
} from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { afterEach, describe, expect, test } from 'vitest';
import {
  ConnectionProcessor,
  type ConnectionTransport,
  MAX_PENDING_INBOUND_BYTES,
  MAX_PENDING_INBOUND_MESSAGES,
  parseDispatchMode,
  SessionRegistry,
} from '../../src/server/index.ts';
import { collectGarbage } from '../helpers/collect-garbage.ts';
import { FakeProcessTable } from '../helpers/fake-process-table.ts';

const INFO = { shell: { name: 'sh', path: '/bin/sh' }, capabilities: {} } as EnvironmentInfo;
const registries: SessionRegistry[] = [];

afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.close()));
});

class MemoryTransport implements ConnectionTransport {
  readonly label = 'memory';
  readonly sent: { message: RpcMessage; codec: CodecName | 'notification' }[] = [];
  readonly events: string[] = [];
  closedWith: string | undefined;
  sendResponse(message: RpcMessage, codec: CodecName): void {
    this.sent.push({ message, codec });
  }
  sendNotification(message: RpcMessage): void {
    this.sent.push({ message, codec: 'notification' });
  }
  close(reason: string): void {
    this.closedWith = reason;
  }
  pauseReading(): void {
    this.events.push('pause');
  }
  resumeReading(): void {
    this.events.push('resume');
  }
  reply(id: number): RpcMessage | undefined {
    return this.sent.map((entry) => entry.message).find((message) => 'id' in message && message.id === id);
  }
}

function open(concurrentRequests = 1) {
  const tables: FakeProcessTable[] = [];
  const registry = new SessionRegistry({
    createProcessTable: () => {
      const table = new FakeProcessTable();
      tables.push(table);
      return table;
    },
  });
  registries.push(registry);
  const transport = new MemoryTransport();
  const processor = new ConnectionProcessor({
    transport,
    registry,
    dispatchMode: parseDispatchMode(concurrentRequests),
    environmentInfo: () => INFO,
  });
  return { transport, processor, tables, registry };
}

async function handshake(transport: MemoryTransport, processor: ConnectionProcessor): Promise<void> {
  processor.receive(requestMessage(1, 'initialize', { clientName: 't' }), 'json');
  processor.receive(notificationMessage('initialized', {}), 'json');
  await waitFor(() => transport.reply(1));
}

/** Starts fake process `p` as request 2. */
async function startFakeProcess(transport: MemoryTransport, processor: ConnectionProcessor): Promise<void> {
  const params = { processId: 'p', argv: ['x'], cwd: 'file:///', env: {}, tty: false };
  processor.receive(requestMessage(2, 'process/start', params), 'json');
  await waitFor(() => transport.reply(2));
}

describe('ConnectionProcessor', () => {
  test('a handled message is not kept while the connection waits for the next one', async () => {
    const { transport, processor } = open();
    await handshake(transport, processor);
    // A large refused write (the 64 MiB frame limit would be the worst case), then silence.
    let params: object | undefined = { processId: 'nope', chunk: 'A'.repeat(1024 * 1024) };
    const handled = new WeakRef(params);
    processor.receive(requestMessage(7, 'process/write', params), 'json');
    params = undefined;
    await waitFor(() => transport.reply(7));
    expect(transport.reply(7)).toHaveProperty('error');
    await collectGarbage();
    expect(handled.deref()).toBeUndefined();
    // Still serving.
    processor.receive(requestMessage(8, 'environment/info', {}), 'json');
    await waitFor(() => transport.reply(8));
  });

  test('replies go out in the codec of their request', async () => {
    const { transport, processor } = open();
    await handshake(transport, processor);
    processor.receive(requestMessage(2, 'environment/status', {}), 'msgpack');
    processor.receive(requestMessage(3, 'environment/status', {}), 'json');
    await waitFor(() => transport.reply(3));
    expect(transport.sent.slice(-2).map((entry) => entry.codec)).toEqual(['msgpack', 'json']);
  });

  test('inbound back-pressure: reading pauses at the cap and resumes once drained', async () => {
    const { transport, processor, tables } = open();
    await handshake(transport, processor);
    await startFakeProcess(transport, processor);
    // An inline long-poll holds the loop; everything behind it queues up.
    processor.receive(requestMessage(3, 'process/read', { processId: 'p', waitMs: 60_000 }), 'json');
    for (let id = 4; id < 4 + MAX_PENDING_INBOUND_MESSAGES; id++) {
      processor.receive(requestMessage(id, 'environment/status', {}), 'json');
    }
    expect(transport.events).toEqual(['pause']);
    tables[0]!.output('p', 'wake up');
    await waitFor(() => transport.reply(3 + MAX_PENDING_INBOUND_MESSAGES));
    expect(transport.events).toEqual(['pause', 'resume']);
    const ids = transport.sent
      .map((entry) => (entry.message as { id?: number }).id)
      .filter((id) => id !== undefined);
    expect(ids).toEqual([
      1,
      2,
      ...Array.from({ length: MAX_PENDING_INBOUND_MESSAGES + 1 }, (_v, i) => i + 3),
    ]);
  });

  test('reading pauses on queued bytes too, and a disconnect drops the queue', async () => {
    const { transport, processor, tables } = open(1);
    await handshake(transport, processor);
    await startFakeProcess(transport, processor);
    processor.receive(requestMessage(3, 'process/read', { processId: 'p', waitMs: 60_000 }), 'json');
    // Four frames of a quarter of the budget each: far below the message count, at the byte mark.
    const quarter = MAX_PENDING_INBOUND_BYTES / 4;
    for (let id = 4; id < 7; id++)
      processor.receive(requestMessage(id, 'environment/status', {}), 'json', quarter);
    expect(transport.events).toEqual([]);
    processor.receive(requestMessage(7, 'environment/status', {}), 'json', quarter);
    expect(transport.events).toEqual(['pause']);
    tables[0]!.output('p', 'wake up');
    await waitFor(() => transport.reply(7));
    expect(transport.events).toEqual(['pause', 'resume']);
    // Queued behind a long-poll when the connection goes: never dispatched.
    processor.receive(
      requestMessage(8, 'process/read', { processId: 'p', afterSeq: 1, waitMs: 60_000 }),
      'json',
    );
    processor.receive(requestMessage(9, 'environment/status', {}), 'json', quarter);
    processor.disconnected('test');
    await processor.done;
    expect(transport.reply(9)).toBeUndefined();
  });

  test('a disconnect abandons in-flight work, detaches the session and ends the loop', async () => {
    const { transport, processor, registry } = open(4);
    await handshake(transport, processor);
    await startFakeProcess(transport, processor);
    processor.receive(requestMessage(3, 'process/read', { processId: 'p', waitMs: 60_000 }), 'json');
    processor.disconnected('test');
    await processor.done;
    expect(transport.reply(3)).toBeUndefined();
    // The session is detached: a new connection may resume it.
    const nextTransport = new MemoryTransport();
    const resumer = new ConnectionProcessor({
      transport: nextTransport,
      registry,
      dispatchMode: parseDispatchMode(1),
      environmentInfo: () => INFO,
    });
    resumer.receive(
      requestMessage(1, 'initialize', { clientName: 't', resumeSessionId: processor.sessionId }),
      'json',
    );
    expect(await waitFor(() => nextTransport.reply(1))).toMatchObject({
      result: { sessionId: processor.sessionId },
    });
    resumer.disconnected();
    await resumer.done;
  });

  test('notifications reach the transport only while attached', async () => {
    const { transport, processor, tables } = open();
    await handshake(transport, processor);
    await startFakeProcess(transport, processor);
    tables[0]!.output('p', 'a');
    expect(transport.sent.filter((entry) => entry.codec === 'notification')).toHaveLength(1);
    processor.disconnected();
    await processor.done;
    tables[0]!.output('p', 'b');
    expect(transport.sent.filter((entry) => entry.codec === 'notification')).toHaveLength(1);
  });
});
