// Session recovery through a fault-injecting proxy (spec §2.3, §3.5, §8.1
// `remote_exec_process_recovers_after_transport_disconnect`): every byte exactly once, every
// write applied exactly once, or a clear failure.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningExecServer } from '@execd/exec-server/server';
import { type CodecName, ExecError, fromUtf8, OutputGapError, RpcError, utf8 } from '@execd/protocol';
import type { ExecProcessEvent } from '@execd/protocol/contract';
import { isProcessAlive } from '@execd/pty-utils';
import { collectEvents, execParams, FaultProxy, readUntil, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ExecServerClientOptions } from '../src/client-options.ts';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { RemoteBackend } from '../src/remote-backend.ts';
import { FAST_RECOVERY, startTrackedServer } from './helpers/harness.ts';

const EMIT_RANDOM = fileURLToPath(new URL('./fixtures/emit-random.mjs', import.meta.url));

let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'execd-recovery-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A server, a proxy in front of it, and a backend whose client connects through the proxy. */
interface Rig extends AsyncDisposable {
  readonly server: RunningExecServer;
  readonly proxy: FaultProxy;
  readonly client: ExecServerClient;
  readonly backend: RemoteBackend;
}

async function rig(
  options: { readonly ttlMs?: number; readonly client?: Partial<ExecServerClientOptions> } = {},
): Promise<Rig> {
  const server = await startTrackedServer(
    options.ttlMs === undefined ? {} : { detachedSessionTtlMs: options.ttlMs },
  );
  const proxy = await FaultProxy.start({ target: server.url });
  const client = await ExecServerClient.connect({ url: proxy.url, ...FAST_RECOVERY, ...options.client });
  const backend = new RemoteBackend(client);
  return {
    server,
    proxy,
    client,
    backend,
    [Symbol.asyncDispose]: async () => {
      await backend.close();
      await proxy.close();
      await server.close();
    },
  };
}

function marker(name: string): string {
  return join(scratch, `${name}-${Math.random().toString(36).slice(2)}`);
}

/** Output events' bytes for one stream, concatenated. */
function streamBytes(events: readonly ExecProcessEvent[], stream: string): Buffer {
  return Buffer.concat(events.flatMap((e) => (e.type === 'output' && e.stream === stream ? [e.chunk] : [])));
}

function expectConsecutive(events: readonly ExecProcessEvent[]): void {
  const seqs = events.flatMap((e) => (e.type === 'failed' ? [] : [e.seq]));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
}

describe.each(['msgpack', 'json'] as CodecName[])('session recovery (%s)', (codec) => {
  test('a connection cut mid-frame while a process emits: byte-exact output after recovery', async () => {
    await using r = await rig({ client: { codec } });
    // 600 KB in 8 KiB writes over roughly a second: stays within the server's 1 MiB retention.
    const proc = await r.backend.start(
      execParams('emitter', [process.execPath, EMIT_RANDOM, '600000', '8192', '10']),
    );
    const collected = collectEvents(proc);
    await waitFor(() => proc.read({ afterSeq: 0 }).then((read) => read.chunks.length >= 3), {
      what: 'some output',
    });
    r.proxy.refuseConnections();
    await r.proxy.cutMidFrame('toClient');
    await waitFor(() => r.client.state === 'recovering', { what: 'the client to notice' });
    // The process keeps writing while the client is away (a few refused reconnects).
    await waitFor(() => r.proxy.stats.refused >= 2, { what: 'reconnect attempts' });
    r.proxy.acceptConnections();
    const events = await collected;
    expect(r.client.state).toBe('ready');
    expect(events.filter((e) => e.type === 'failed')).toEqual([]);
    expectConsecutive(events);
    const stdout = streamBytes(events, 'stdout');
    expect(stdout.length).toBe(600_000);
    const reported = fromUtf8(streamBytes(events, 'stderr')).trim();
    expect(`sha256:${createHash('sha256').update(stdout).digest('hex')}`).toBe(reported);
    expect(events.at(-2)).toMatchObject({ type: 'exited', exitCode: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'closed' });
  });

  test('a write cut off by a disconnect is applied exactly once', async () => {
    await using r = await rig({ client: { codec } });
    const script = 'while read line; do printf "line:%s\\n" "$line"; done';
    const proc = await r.backend.start(execParams('writer', ['sh', '-c', script], { pipeStdin: true }));

    // 1. The request reached the server, its answer is lost.
    r.proxy.pause('toClient');
    const sent = r.proxy.stats.frames.toServer;
    const first = proc.write(utf8('first\n'));
    await waitFor(() => r.proxy.stats.frames.toServer > sent, { what: 'the write to pass the proxy' });
    r.proxy.drop();
    r.proxy.resume('toClient');
    expect(await first).toEqual({ status: 'accepted' });

    // 2. The request itself is lost.
    await waitFor(() => r.client.state === 'ready', { what: 'recovery' });
    r.proxy.pause('toServer');
    const second = proc.write(utf8('second\n'));
    r.proxy.drop();
    r.proxy.resume('toServer');
    expect(await second).toEqual({ status: 'accepted' });

    const third = await proc.write(utf8('third\n'));
    expect(third).toEqual({ status: 'accepted' });
    const { text } = await readUntil(proc, { until: (o) => o.text.includes('line:third\n') });
    expect(text).toBe('line:first\nline:second\nline:third\n');
    expect(await proc.terminate()).toEqual({ running: true });
  });

  test('a read in flight during recovery blocks, then returns exactly the missed output', async () => {
    await using r = await rig({ client: { codec } });
    const go = marker('go');
    const emitted = marker('emitted');
    const script =
      'printf "ready\\n"; while [ ! -e "$1" ]; do sleep 0.02; done; printf "missed\\n"; : > "$2"; sleep 30';
    const proc = await r.backend.start(execParams('poller', ['sh', '-c', script, 'sh', go, emitted]));
    const ready = await readUntil(proc, { until: (o) => o.text === 'ready\n' });
    // A follower of pushed events: nothing is pushed after the missed output, so only the
    // recovery read can deliver it.
    const followed = (async () => {
      let text = '';
      for await (const event of proc.events({ cancelSignal: AbortSignal.timeout(20_000) })) {
        if (event.type === 'output') text += fromUtf8(event.chunk);
        if (text.includes('missed\n')) return text;
      }
      return text;
    })();
    let settled = false;
    const longPoll = proc.read({ afterSeq: ready.afterSeq, waitMs: 15_000 }).finally(() => {
      settled = true;
    });
    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'recovering', { what: 'recovering' });
    await writeFile(go, '');
    await waitFor(() => existsSync(emitted), { what: 'the process to write while disconnected' });
    expect(settled).toBe(false);
    r.proxy.acceptConnections();
    const read = await longPoll;
    expect(read.failure).toBeNull();
    expect(read.chunks.map((c) => fromUtf8(c.chunk)).join('')).toBe('missed\n');
    expect(read.chunks[0]!.seq).toBe(ready.afterSeq + 1);
    expect(await followed).toBe('ready\nmissed\n');
    expect(await proc.terminate()).toEqual({ running: true });
  });
});

describe('session recovery: the original scenario and failures', () => {
  test('remote_exec_process_recovers_after_transport_disconnect', async () => {
    await using r = await rig();
    const go = marker('go');
    const emitted = marker('emitted');
    const script =
      'printf "ready:%s\\n" "$$"; while [ ! -e "$1" ]; do sleep 0.02; done; printf "during:%s\\n" "$$"; : > "$2"; ' +
      'read line; printf "after:%s:%s\\n" "$$" "$line"; exit 7';
    const proc = await r.backend.start(
      execParams('proc-recover', ['sh', '-c', script, 'sh', go, emitted], { pipeStdin: true }),
    );
    const collected = collectEvents(proc);
    const ready = await readUntil(proc, {
      until: (o) => o.text.startsWith('ready:') && o.text.endsWith('\n'),
    });
    const pid = ready.text.slice('ready:'.length).trim();

    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'recovering', { what: 'recovering' });
    await writeFile(go, '');
    await waitFor(() => existsSync(emitted), { what: 'output while disconnected' });
    let settled = false;
    const during = proc.read({ afterSeq: ready.afterSeq, waitMs: 0 }).finally(() => {
      settled = true;
    });
    // The read waits for the session to be resumed (the original asserts it blocks >= 200 ms).
    await waitFor(() => r.proxy.stats.refused >= 2, { what: 'reconnect attempts' });
    expect(settled).toBe(false);
    r.proxy.acceptConnections();
    const missed = await during;
    expect(missed.failure).toBeNull();
    expect(missed.chunks.map((c) => fromUtf8(c.chunk)).join('')).toBe(`during:${pid}\n`);
    expect(await proc.write(utf8('hello\n'))).toEqual({ status: 'accepted' });

    const events = await collected;
    expectConsecutive(events);
    const text = fromUtf8(streamBytes(events, 'stdout'));
    expect(text).toBe(`ready:${pid}\nduring:${pid}\nafter:${pid}:hello\n`);
    const exited = events.at(-2)!;
    const closed = events.at(-1)!;
    expect(exited).toMatchObject({ type: 'exited', exitCode: 7 });
    expect(closed).toEqual({ type: 'closed', seq: (exited as { seq: number }).seq + 1 });
  });

  test('a disconnect longer than the session TTL fails every process with the documented message', async () => {
    await using r = await rig({ ttlMs: 300 });
    const proc = await r.backend.start(
      execParams('long', ['sh', '-c', 'printf "pid:%s\\n" "$$"; exec sleep 60']),
    );
    const started = await readUntil(proc, { until: (o) => /pid:\d+\n/.test(o.text) });
    const pid = Number(started.text.match(/pid:(\d+)/)![1]);
    const collected = collectEvents(proc);
    r.proxy.refuseConnections();
    r.proxy.drop();
    // The server reaps the session's processes once the TTL expired.
    await waitFor(() => !isProcessAlive(pid), { what: 'the detached session to expire' });
    r.proxy.acceptConnections();
    const events = await collected;
    const failed = events.at(-1)!;
    expect(failed.type).toBe('failed');
    const message = (failed as { message: string }).message;
    expect(message).toMatch(
      new RegExp(
        `^exec-server transport disconnected: .+; failed to resume exec-server session: unknown session id ${r.client.sessionId}$`,
      ),
    );
    expect(r.client.state).toBe('failed');
    expect(r.client.failure).toBe(message);
    // Reads answer the synthesized failure response (spec §3.5).
    expect(await proc.read({ afterSeq: 0 })).toEqual({
      chunks: [],
      nextSeq: started.afterSeq + 1,
      exited: true,
      exitCode: null,
      closed: true,
      failure: message,
      sandboxDenied: false,
    });
    // Writes and new starts fail with transportClosed.
    const write = await proc.write(utf8('x')).catch((error: unknown) => error);
    expect(ExecError.is(write) && write.code).toBe('transportClosed');
    const start = await r.backend.start(execParams('next', ['true'])).catch((error: unknown) => error);
    expect(ExecError.is(start) && start.code).toBe('transportClosed');
  });

  test('recovery gives up at its deadline', async () => {
    await using r = await rig({ client: { recoveryTimeoutMs: 400 } });
    const proc = await r.backend.start(execParams('waiting', ['sleep', '60']));
    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'failed', { what: 'recovery to give up' });
    const read = await proc.read();
    expect(read.failure).toMatch(
      /^exec-server transport disconnected: .+; failed to resume exec-server session: .+/,
    );
    // Nothing more can be done through this client; the server reaps the session after its TTL.
    await r.server.close();
  });

  test('two clients resuming one session: the second gets -32010', async () => {
    // The first client's recovery must outlast the second client's connect (slow on a loaded
    // machine) and then meet -32010 at least once: its failure is the last refusal it met.
    await using r = await rig({ client: { recoveryTimeoutMs: 5_000 } });
    const attached = await ExecServerClient.connect({
      url: r.server.url,
      resumeSessionId: r.client.sessionId,
    }).catch((error: unknown) => error);
    expect(RpcError.is(attached) && [attached.code, attached.rpcCode]).toEqual([
      'sessionAlreadyAttached',
      -32010,
    ]);

    // A takeover while the first client is away: its recovery keeps meeting -32010 and fails.
    const proc = await r.backend.start(execParams('shared', ['sleep', '60']));
    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'recovering', { what: 'recovering' });
    await using second = await ExecServerClient.connect({
      url: r.server.url,
      resumeSessionId: r.client.sessionId,
    });
    expect(second.sessionId).toBe(r.client.sessionId);
    r.proxy.acceptConnections();
    await waitFor(() => r.client.state === 'failed', { timeoutMs: 20_000, what: 'the first client to fail' });
    expect(r.client.failure).toMatch(/already attached to another connection$/);
    expect((await proc.read()).failure).toBe(r.client.failure);
    expect(await new RemoteBackend(second, { ownsClient: false }).client.listProcesses()).toMatchObject({
      processes: [{ processId: 'shared', state: 'running' }],
    });
    await r.server.close();
  });

  test('output evicted on the server during a disconnect is a typed gap, never a silent skip', async () => {
    await using r = await rig();
    const go = marker('go');
    const done = marker('done');
    const script =
      'printf "first\\n"; while [ ! -e "$1" ]; do sleep 0.02; done; head -c 3000000 /dev/zero; printf "last\\n"; : > "$2"';
    const proc = await r.backend.start(execParams('flood', ['sh', '-c', script, 'sh', go, done]));
    const first = await readUntil(proc, { until: (o) => o.text === 'first\n' });
    const follower = (async () => {
      const seen: ExecProcessEvent[] = [];
      try {
        for await (const event of proc.events({ afterSeq: 0 })) seen.push(event);
      } catch (error) {
        return { seen, error };
      }
      return { seen, error: undefined };
    })();
    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'recovering', { what: 'recovering' });
    await writeFile(go, '');
    await waitFor(() => existsSync(done), { what: 'the flood to be written while the client is away' });
    r.proxy.acceptConnections();
    const { seen, error } = await follower;
    expect(seen.map((e) => e.type)).toEqual(['output']);
    expect(error).toBeInstanceOf(OutputGapError);
    const gap = (error as OutputGapError).firstRetainedSeq;
    expect(gap).toBeGreaterThan(first.afterSeq + 1);
    // Continuing after the gap delivers the rest, ending with the exit and closed.
    const rest = await collectEvents(proc, { afterSeq: gap - 1 });
    expect(rest.at(-1)).toMatchObject({ type: 'closed' });
    expect(rest.at(-2)).toMatchObject({ type: 'exited', exitCode: 0 });
    expect(fromUtf8(streamBytes(rest, 'stdout')).endsWith('last\n')).toBe(true);
    // A read from before the gap says so too.
    expect((await proc.read({ afterSeq: first.afterSeq })).firstRetainedSeq).toBeGreaterThan(
      first.afterSeq + 1,
    );
  });

  test('a start issued while recovering waits; a start cut off is rejected and its process terminated', async () => {
    await using r = await rig();
    // Cut off: the request reaches the server, the answer is lost.
    r.proxy.pause('toClient');
    const sent = r.proxy.stats.frames.toServer;
    const cutOff = r.backend.start(execParams('cut-off', ['sleep', '60'])).catch((error: unknown) => error);
    await waitFor(() => r.proxy.stats.frames.toServer > sent, { what: 'the start to pass the proxy' });
    r.proxy.refuseConnections();
    r.proxy.drop();
    r.proxy.resume('toClient');
    const error = await cutOff;
    expect(ExecError.is(error) && error.code).toBe('transportClosed');
    // Issued while recovering: waits for the session, then runs.
    const waiting = r.backend.start(execParams('later', ['sh', '-c', 'printf later']));
    r.proxy.acceptConnections();
    const later = await waiting;
    expect((await readUntil(later)).text).toBe('later');
    // The cut-off start did reach the server; recovery terminated it.
    await waitFor(
      async () =>
        (await r.client.listProcesses()).processes.find((p) => p.processId === 'cut-off')?.state !==
        'running',
      { what: 'the orphan to be terminated' },
    );
  });

  test('close() during recovery ends it; followers end quietly', async () => {
    await using r = await rig();
    const proc = await r.backend.start(execParams('quiet', ['sleep', '60']));
    const events = collectEvents(proc);
    r.proxy.refuseConnections();
    r.proxy.drop();
    await waitFor(() => r.client.state === 'recovering', { what: 'recovering' });
    await r.client.close();
    expect(r.client.state).toBe('closed');
    expect(await events).toEqual([]);
    const read = await proc.read().catch((error: unknown) => error);
    expect(ExecError.is(read) && read.code).toBe('transportClosed');
    await r.server.close();
  });

  test('a stalled connection is detected by keepalive and recovered', async () => {
    await using r = await rig({ client: { keepaliveIntervalMs: 100 } });
    const proc = await r.backend.start(
      execParams('stall', ['sh', '-c', 'read x; printf "got:%s\\n" "$x"'], { pipeStdin: true }),
    );
    r.proxy.pause('both');
    await waitFor(() => r.client.state === 'recovering', { what: 'the stall to be detected' });
    r.proxy.resume('both');
    expect(await proc.write(utf8('ok\n'))).toEqual({ status: 'accepted' });
    const { text } = await readUntil(proc);
    expect(text).toBe('got:ok\n');
  });
});
