// Spec §8.3 (exec-server/tests/process.rs): raw JSON-RPC over a real WebSocket, real children.
import { pathToFileUri } from '@execd/protocol';
import { ProcessTracker, waitFor } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { LocalProcessTable } from '../../src/local/index.ts';
import { localEnvironmentInfo } from '../../src/server/index.ts';
import { RawWsClient } from '../helpers/raw-ws-client.ts';
import { startTestServer } from '../helpers/test-server.ts';

const CWD = pathToFileUri(process.cwd());
const tracker = new ProcessTracker();

function startParams(
  processId: string,
  argv: string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { processId, argv, cwd: CWD, env: {}, tty: false, pipeStdin: false, arg0: null, ...extra };
}

/** Collects stdout text from a read loop until the process closed. */
async function readUntilClosed(
  client: RawWsClient,
  processId: string,
): Promise<{ text: string; exitCode: unknown }> {
  let after = 0;
  let text = '';
  for (;;) {
    const read = await client.call<{
      chunks: { seq: number; chunk: string }[];
      nextSeq: number;
      closed: boolean;
      exitCode: number | null;
    }>('process/read', { processId, afterSeq: after, maxBytes: null, waitMs: 2_000 });
    for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString('utf8');
    after = read.nextSeq - 1;
    if (read.closed) return { text, exitCode: read.exitCode };
  }
}

async function trackPids(client: RawWsClient): Promise<void> {
  const list = await client.call<{ processes: { pid?: number }[] }>('process/list', {});
  for (const entry of list.processes) if (entry.pid !== undefined) tracker.add(entry.pid);
}

describe('process methods over a websocket', () => {
  test('exec_server_starts_process_over_websocket', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const result = await client.call('process/start', startParams('proc-1', ['true']));
    expect(result).toEqual({ processId: 'proc-1', sandboxType: 'none' });
    const done = await readUntilClosed(client, 'proc-1');
    expect(done.exitCode).toBe(0);
  });
});

describe('dispatch order', () => {
  test('exec_server_runs_ordinary_requests_serially_by_default', async () => {
    const tmp = '/tmp/execd-serial-test';
    await using server = await startTestServer({
      environmentInfo: () => localEnvironmentInfo({ env: { ...process.env, TMPDIR: tmp } }),
    });
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await client.call('process/start', startParams('proc-1', ['sleep', '30']));
    await trackPids(client);
    const read = client.request('process/read', {
      processId: 'proc-1',
      afterSeq: 0,
      maxBytes: null,
      waitMs: 250,
    });
    const info = client.request('environment/info', {});
    const start = client.request('process/start', startParams('proc-2', ['sleep', '30']));
    const startReply = await client.response(start);
    expect(startReply.result).toEqual({ processId: 'proc-2', sandboxType: 'none' });
    await trackPids(client);
    const order = client.frames
      .map((frame) => frame.message.id)
      .filter((id) => id === read || id === info || id === start);
    expect(order).toEqual([read, info, start]);
    const infoResult = (await client.response(info)).result as {
      temporaryDirectories: string[];
      tempDir: string;
    };
    expect(infoResult.temporaryDirectories).toEqual([pathToFileUri(tmp)]);
    expect(infoResult.tempDir).toBe(pathToFileUri(tmp));
    expect(await client.call('process/terminate', { processId: 'proc-1' })).toEqual({ running: true });
    expect(await client.call('process/terminate', { processId: 'proc-2' })).toEqual({ running: true });
  });

  test('exec_server_keeps_control_requests_live_during_long_reads_and_queued_requests', async () => {
    await using server = await startTestServer({ concurrentRequests: 32 });
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await client.call('process/start', startParams('proc-1', ['sleep', '600']));
    await trackPids(client);
    const longRead = (): number =>
      client.request('process/read', { processId: 'proc-1', afterSeq: 0, waitMs: 600_000 });
    const reads = [longRead()];
    // A long read does not block a new start.
    expect(await client.call('process/start', startParams('proc-2', ['true']))).toMatchObject({
      processId: 'proc-2',
    });
    while (reads.length < 32) reads.push(longRead());
    expect(await client.call('environment/info', {})).toMatchObject({ shell: expect.any(Object) });
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
    const queued = longRead();
    expect(await client.call('environment/status', {})).toEqual({ status: 'ready' });
    expect(
      client.frames.some(
        (frame) => frame.message.id === queued || reads.includes(frame.message.id as number),
      ),
    ).toBe(false);
    expect(await client.call('process/terminate', { processId: 'proc-1' })).toEqual({ running: true });
    const last = await client.response(queued);
    expect(last.result).toMatchObject({ exited: true });
    for (const id of reads) expect((await client.response(id)).result).toMatchObject({ exited: true });
  });

  test('duplicate_process_ids_allow_only_one_successful_start (concurrent lanes)', async () => {
    await using server = await startTestServer({ concurrentRequests: 4 });
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const first = client.request('process/start', startParams('proc-1', ['sleep', '30']));
    const second = client.request('process/start', startParams('proc-1', ['sleep', '30']));
    const replies = [await client.response(first), await client.response(second)];
    await trackPids(client);
    expect(replies.filter((reply) => 'result' in reply)).toHaveLength(1);
    expect(replies.find((reply) => 'error' in reply)?.error).toEqual({
      code: -32600,
      message: 'process proc-1 already exists',
    });
    expect(await client.call('process/terminate', { processId: 'proc-1' })).toEqual({ running: true });
  });
});

describe('stdin', () => {
  test('exec_server_defaults_omitted_pipe_stdin_to_closed_stdin', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const { pipeStdin: _omitted, ...params } = startParams('proc-1', ['sleep', '30']);
    await client.call('process/start', params);
    await trackPids(client);
    expect(
      await client.call('process/write', {
        processId: 'proc-1',
        chunk: 'aWdub3JlZAo=',
        writeId: 'write-default-stdin',
      }),
    ).toEqual({
      status: 'stdinClosed',
    });
    await client.call('process/terminate', { processId: 'proc-1' });
  });

  test('exec_server_dedupes_retried_process_write_ids', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    const script = 'while IFS= read -r line; do printf "line:%s\\n" "$line"; done';
    await client.call('process/start', startParams('proc-1', ['sh', '-c', script], { pipeStdin: true }));
    await trackPids(client);
    const write = (text: string, writeId: string) =>
      client.call('process/write', {
        processId: 'proc-1',
        chunk: Buffer.from(text).toString('base64'),
        writeId,
      });
    expect(await write('first\n', 'write-1')).toEqual({ status: 'accepted' });
    expect(await write('first\n', 'write-1')).toEqual({ status: 'accepted' });
    expect(await write('second\n', 'write-2')).toEqual({ status: 'accepted' });
    let text = '';
    let after = 0;
    await waitFor(
      async () => {
        const read = await client.call<{ chunks: { chunk: string }[]; nextSeq: number }>('process/read', {
          processId: 'proc-1',
          afterSeq: after,
          waitMs: 1_000,
        });
        for (const chunk of read.chunks) text += Buffer.from(chunk.chunk, 'base64').toString();
        after = read.nextSeq - 1;
        return text.includes('line:second\n');
      },
      { what: 'both lines' },
    );
    expect(text).toBe('line:first\nline:second\n');
    await client.call('process/terminate', { processId: 'proc-1' });
  });

  test('msgpack clients write stdin as bin and read output as bin', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url, { codec: 'msgpack' });
    await client.initialize();
    await client.call(
      'process/start',
      startParams('proc-1', ['sh', '-c', 'IFS= read -r line; printf "got:%s\\n" "$line"'], {
        pipeStdin: true,
      }),
    );
    await trackPids(client);
    expect(
      await client.call('process/write', {
        processId: 'proc-1',
        chunk: Buffer.from('hello\n'),
        writeId: 'w1',
      }),
    ).toEqual({
      status: 'accepted',
    });
    let text = '';
    let after = 0;
    for (;;) {
      const read = await client.call<{ chunks: { chunk: Uint8Array }[]; nextSeq: number; closed: boolean }>(
        'process/read',
        {
          processId: 'proc-1',
          afterSeq: after,
          waitMs: 2_000,
        },
      );
      for (const chunk of read.chunks) text += Buffer.from(chunk.chunk).toString();
      after = read.nextSeq - 1;
      if (read.closed) break;
    }
    expect(text).toBe('got:hello\n');
  });
});

describe('sessions over a websocket', () => {
  test('exec_server_resumes_detached_session_without_killing_processes', async () => {
    await using server = await startTestServer();
    const first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    await first.call('process/start', startParams('proc-1', ['sleep', '30']));
    await trackPids(first);
    await first.close();
    await using second = await RawWsClient.connect(server.url);
    const resumed = await resumeWhenDetached(second, sessionId);
    expect(resumed).toMatchObject({ sessionId });
    second.notify('initialized');
    const read = await second.call('process/read', {
      processId: 'proc-1',
      afterSeq: 0,
      maxBytes: null,
      waitMs: 0,
    });
    expect(read).toMatchObject({ exited: false, closed: false, failure: null });
    expect(await second.call('process/terminate', { processId: 'proc-1' })).toEqual({ running: true });
  });

  test('active_session_resume_is_rejected with -32010 while the first connection lives', async () => {
    await using server = await startTestServer();
    await using first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    await using second = await RawWsClient.connect(server.url);
    const id = second.request('initialize', { clientName: 't', resumeSessionId: sessionId });
    expect(await second.errorOf(id)).toEqual({
      code: -32010,
      message: `session ${sessionId} is already attached to another connection`,
    });
  });

  test('transport_disconnect_detaches_session_during_in_flight_read', async () => {
    await using server = await startTestServer();
    const first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    await first.call('process/start', startParams('proc-1', ['sleep', '30']));
    await trackPids(first);
    first.request('process/read', { processId: 'proc-1', afterSeq: 0, waitMs: 25_000 });
    await first.drop();
    await using second = await RawWsClient.connect(server.url);
    expect(await resumeWhenDetached(second, sessionId)).toMatchObject({ sessionId });
    second.notify('initialized');
    expect(await second.call('process/terminate', { processId: 'proc-1' })).toEqual({ running: true });
  });

  test('output_and_exit_are_retained_while_detached; the id is reusable after retention', async () => {
    await using server = await startTestServer({
      createProcessTable: () => new LocalProcessTable({ exitedRetentionMs: 50 }),
    });
    const first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    // Prints once told to (while its client is gone), then waits for a last line before exiting.
    const script = 'read -r _; printf "first\\nsecond\\n"; read -r _';
    await first.call('process/start', startParams('proc-1', ['sh', '-c', script], { pipeStdin: true }));
    await trackPids(first);
    const write = (client: RawWsClient, writeId: string) =>
      client.call('process/write', {
        processId: 'proc-1',
        chunk: Buffer.from('go\n').toString('base64'),
        writeId,
      });
    await write(first, 'go');
    await first.drop();
    await using second = await RawWsClient.connect(server.url);
    await resumeWhenDetached(second, sessionId);
    second.notify('initialized');
    const printed = await waitFor(async () => {
      const read = await second.call<{ chunks: { chunk: string }[] }>('process/read', {
        processId: 'proc-1',
        waitMs: 1_000,
      });
      const text = read.chunks.map((chunk) => Buffer.from(chunk.chunk, 'base64').toString()).join('');
      return text === 'first\nsecond\n' && text;
    });
    expect(printed).toBe('first\nsecond\n');
    await write(second, 'end');
    expect(await readUntilClosed(second, 'proc-1')).toEqual({ text: 'first\nsecond\n', exitCode: 0 });
    await waitFor(
      async () => {
        const reply = await second.response(second.request('process/start', startParams('proc-1', ['true'])));
        return 'result' in reply;
      },
      { what: 'proc-1 to be reusable' },
    );
    await readUntilClosed(second, 'proc-1');
  });

  test('a session not resumed within its TTL is removed and its process trees killed', async () => {
    await using server = await startTestServer({ detachedSessionTtlMs: 100 });
    const first = await RawWsClient.connect(server.url);
    const { sessionId } = await first.initialize();
    await first.call('process/start', startParams('proc-1', ['sh', '-c', 'sleep 30 & sleep 30']));
    await trackPids(first);
    await first.drop();
    await tracker.expectNoSurvivors();
    await using second = await RawWsClient.connect(server.url);
    const id = second.request('initialize', { clientName: 't', resumeSessionId: sessionId });
    expect(await second.errorOf(id)).toEqual({ code: -32600, message: `unknown session id ${sessionId}` });
  });

  test('terminate_reports_false_after_process_exit', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await client.call('process/start', startParams('proc-1', ['sleep', '0.1']));
    await trackPids(client);
    await waitFor(
      async () =>
        (await client.call<{ running: boolean }>('process/terminate', { processId: 'proc-1' })).running ===
        false,
    );
  });

  test('notifications are pushed in seq order: output, exited, closed', async () => {
    await using server = await startTestServer();
    await using client = await RawWsClient.connect(server.url);
    await client.initialize();
    await client.call(
      'process/start',
      startParams('proc-1', [
        'sh',
        '-c',
        'printf "event output\\n"; sleep 0.1; printf "event err\\n" >&2; exit 7',
      ]),
    );
    await trackPids(client);
    const closed = await waitFor(() => client.notifications('process/closed')[0]);
    const events = client
      .notifications()
      .filter((message) => String(message.method).startsWith('process/'))
      .map((message) => ({ method: message.method, ...(message.params as Record<string, unknown>) }));
    expect(events).toEqual([
      {
        method: 'process/output',
        processId: 'proc-1',
        seq: 1,
        stream: 'stdout',
        chunk: Buffer.from('event output\n').toString('base64'),
      },
      {
        method: 'process/output',
        processId: 'proc-1',
        seq: 2,
        stream: 'stderr',
        chunk: Buffer.from('event err\n').toString('base64'),
      },
      { method: 'process/exited', processId: 'proc-1', seq: 3, exitCode: 7, sandboxDenied: false },
      { method: 'process/closed', processId: 'proc-1', seq: 4 },
    ]);
    expect(closed).toBeDefined();
  });
});

/** Resumes `sessionId`, retrying while the server has not yet noticed the old connection's end. */
async function resumeWhenDetached(client: RawWsClient, sessionId: string): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const reply = await client.response(
        client.request('initialize', { clientName: 't', resumeSessionId: sessionId }),
      );
      if ('result' in reply) return reply.result as Record<string, unknown>;
      expect((reply.error as { code: number }).code).toBe(-32010);
      return undefined;
    },
    { what: 'the old connection to detach' },
  );
}
