// What the execd client meets on the original exec-server where the shared scenario suite tests
// execd-only behaviour (see vitest.compat.config.ts): the original's observed answers, asserted,
// so a change on either side shows up here.
import { tmpdir } from 'node:os';
import { ExecError, OutputGapError, pathToFileUri, RpcError } from '@execd/protocol';
import {
  collectEvents,
  execParams,
  type PeerServer,
  readUntil,
  startPeerServer,
  waitFor,
} from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ExecServerClient } from '../../src/exec-server-client.ts';
import { RemoteBackend } from '../../src/remote-backend.ts';

let peer: PeerServer;

beforeAll(async () => {
  peer = await startPeerServer();
});

afterAll(async () => {
  await peer?.close();
});

async function backend(): Promise<RemoteBackend> {
  return new RemoteBackend(await ExecServerClient.connect({ url: peer.url, codec: 'json' }));
}

function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('the execd client on the original exec-server', () => {
  test('process/resize is not implemented: an unsupported ExecError', async () => {
    await using remote = await backend();
    const proc = await remote.start(execParams('tty', ['sh', '-c', 'read x'], { tty: true }));
    const error = await failure(proc.resize(100, 30));
    expect(ExecError.is(error) && error.code).toBe('unsupported');
    const cause = (error as Error).cause;
    expect(RpcError.is(cause) && [cause.rpcCode, cause.message]).toEqual([
      -32601,
      'exec-server stub does not implement `process/resize` yet',
    ]);
    expect(await proc.terminate()).toEqual({ running: true });
  });

  test('process/start errors: same codes, the original texts', async () => {
    await using remote = await backend();
    const empty = await failure(remote.start(execParams('a', [])));
    expect(ExecError.is(empty) && [empty.code, empty.message]).toEqual([
      'invalidParams',
      'argv must not be empty',
    ]);
    const badCwd = await failure(remote.start(execParams('b', ['true'], { cwd: '/tmp' })));
    expect(ExecError.is(badCwd) && [badCwd.code, badCwd.message]).toEqual([
      'invalidParams',
      'invalid URI: relative URL without a base',
    ]);
    const missing = await failure(remote.start(execParams('c', ['/nonexistent/execd-no-such-program'])));
    expect(ExecError.is(missing) && [missing.code, missing.message]).toEqual([
      'internal',
      'No such file or directory (os error 2)',
    ]);
    const proc = await remote.start(execParams('c', ['true']));
    expect((await readUntil(proc)).last.exitCode).toBe(0);
  });

  test("execd's sandbox field is refused by the original (-32602)", async () => {
    await using remote = await backend();
    const error = await failure(
      remote.start(
        execParams('s', ['true'], { cwd: pathToFileUri(tmpdir()), sandbox: { profile: 'read-only' } }),
      ),
    );
    expect(ExecError.is(error) && [error.code, error.message]).toEqual([
      'invalidParams',
      'missing field `permissions`',
    ]);
  });

  test('output lost to retention: the original says nothing; the client still reports the gap', async () => {
    await using remote = await backend();
    const proc = await remote.start(execParams('big', ['head', '-c', '3000000', '/dev/zero']));
    await waitFor(() => proc.read({ afterSeq: 2 ** 40 }).then((read) => read.closed), {
      what: 'the process to close',
    });
    const replay = await proc.read({ afterSeq: 0 });
    expect(replay.firstRetainedSeq).toBeUndefined();
    expect(replay.chunks[0]!.seq).toBeGreaterThan(1);
    // The client's own replay log is bounded too, and says so.
    const gap = await collectEvents(proc, { afterSeq: 0 }).catch((error: unknown) => error);
    expect(gap).toBeInstanceOf(OutputGapError);
    const retained = await collectEvents(proc);
    expect(retained.at(-1)).toMatchObject({ type: 'closed' });
  });
});
