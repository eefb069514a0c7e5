// The `process/waitingForInput` extension over a real WebSocket, both codecs: sent only to a
// client that opted in at `initialize`, with `ReadResponse.waitingForInput` likewise.
import { pathToFileUri } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { LocalProcessTable } from '../../src/local/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const CWD = pathToFileUri(process.cwd());
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const CODECS = ['json', 'msgpack'] as const;

function bytes(client: RawWsClient, text: string): string | Uint8Array {
  const data = new TextEncoder().encode(text);
  return client.codec === 'msgpack' ? data : Buffer.from(data).toString('base64');
}

function text(chunk: unknown): string {
  return typeof chunk === 'string'
    ? Buffer.from(chunk, 'base64').toString('utf8')
    : Buffer.from(chunk as Uint8Array).toString('utf8');
}

async function initialize(
  client: RawWsClient,
  optIn: boolean,
): Promise<{ environmentInfo: { capabilities: Record<string, unknown> } }> {
  const result = await client.call<{ environmentInfo: { capabilities: Record<string, unknown> } }>(
    'initialize',
    {
      clientName: 'raw-test-client',
      ...(optIn ? { waitingForInput: true } : {}),
    },
  );
  client.notify('initialized', {});
  return result;
}

interface ReadResult {
  chunks: { seq: number; chunk: unknown }[];
  nextSeq: number;
  closed: boolean;
  waitingForInput?: boolean;
}

describe.skipIf(process.platform !== 'linux').each(CODECS)('%s: process/waitingForInput', (codec) => {
  test('an opted-in client is told when `read` waits, and again after each answer', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url, { codec });
    const info = await initialize(client, true);
    expect(info.environmentInfo.capabilities.waitingForInput).toBe(true);
    const argv = ['bash', '-c', 'read -r a; echo "got $a"; read -r b; echo "bye $b"'];
    await client.call('process/start', { processId: 'p', argv, cwd: CWD, env: ENV, tty: true });
    await waitFor(() => client.notifications('process/waitingForInput').length === 1, { what: 'first wait' });
    expect(client.notifications('process/waitingForInput')[0]?.params).toEqual({ processId: 'p', seq: 0 });
    const first = await client.call<ReadResult>('process/read', { processId: 'p', afterSeq: 0 });
    expect(first).toMatchObject({ chunks: [], nextSeq: 1, waitingForInput: true });

    await client.call('process/write', { processId: 'p', chunk: bytes(client, 'x\n'), writeId: 'w1' });
    await waitFor(() => client.notifications('process/waitingForInput').length === 2, {
      what: 'second wait',
    });
    const second = client.notifications('process/waitingForInput')[1]?.params as { seq: number };
    // Every output up to the reported seq came before the report.
    const shown = client
      .notifications('process/output')
      .map((note) => note.params as { seq: number; chunk: unknown })
      .filter((params) => params.seq <= second.seq)
      .map((params) => text(params.chunk))
      .join('');
    expect(shown).toBe('x\r\ngot x\r\n');

    await client.call('process/write', { processId: 'p', chunk: bytes(client, 'y\n'), writeId: 'w2' });
    await waitFor(() => client.notifications('process/closed').length === 1, { what: 'close' });
    expect(client.notifications('process/waitingForInput')).toHaveLength(2);
  });

  test('a client that did not opt in never sees the notification or the field', async () => {
    const tables: LocalProcessTable[] = [];
    await using server = await startTestServer({
      createProcessTable: () => {
        const table = new LocalProcessTable();
        tables.push(table);
        return table;
      },
    });
    await using client = await RawWsClient.connect(server.url, { codec });
    await initialize(client, false);
    const argv = ['bash', '-c', 'echo ready; read -r a; echo "got $a"'];
    await client.call('process/start', { processId: 'p', argv, cwd: CWD, env: ENV, tty: true });
    // The table itself knows (in-process reads are not filtered) ...
    const table = tables[0]!;
    await waitFor(async () => (await table.read({ processId: 'p', afterSeq: 0 })).waitingForInput === true, {
      what: 'the table to see the wait',
    });
    // ... but the wire says nothing of it.
    const read = await client.call<ReadResult>('process/read', { processId: 'p', afterSeq: 0 });
    expect(read.chunks.length).toBeGreaterThan(0);
    expect(read).not.toHaveProperty('waitingForInput');
    await client.call('process/write', { processId: 'p', chunk: bytes(client, 'z\n'), writeId: 'w1' });
    await waitFor(() => client.notifications('process/closed').length === 1, { what: 'close' });
    expect(client.notifications('process/waitingForInput')).toEqual([]);
    // (The initialize result's capabilities name it; nothing after does.)
    const afterInitialize = client.frames.slice(1).map((frame) => JSON.stringify(frame.message));
    expect(afterInitialize.filter((frame) => frame.includes('waitingForInput'))).toEqual([]);
  });

  test('a pipe process is never reported', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url, { codec });
    await initialize(client, true);
    const argv = ['bash', '-c', 'read -r a; echo "got $a"'];
    await client.call('process/start', {
      processId: 'p',
      argv,
      cwd: CWD,
      env: ENV,
      tty: false,
      pipeStdin: true,
    });
    await client.call('process/write', { processId: 'p', chunk: bytes(client, 'q\n'), writeId: 'w1' });
    await waitFor(() => client.notifications('process/closed').length === 1, { what: 'close' });
    expect(client.notifications('process/waitingForInput')).toEqual([]);
  });
});
