// RemoteFileSystem against a real server through a fault-injecting proxy: idempotent calls survive
// a resumed session; handles and the watch (the server ties them to the connection) do not, and
// the watch tells its owner to look again.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { FaultProxy, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ExecServerClient } from '../src/exec-server-client.ts';
import { RemoteFileSystem } from '../src/remote-file-system.ts';
import { FAST_RECOVERY, startTrackedServer } from './helpers/harness.ts';

let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'execd-remote-fs-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

test('after a dropped connection: reads go on, handles are gone, the watch reports a change', async () => {
  await using server = await startTrackedServer();
  await using proxy = await FaultProxy.start({ target: server.url });
  await using client = await ExecServerClient.connect({ url: proxy.url, ...FAST_RECOVERY });
  const fs = new RemoteFileSystem(client);
  const file = join(scratch, 'a.txt');
  await writeFile(file, 'hello');
  const handle = await fs.open(file);
  expect(new TextDecoder().decode((await handle.read(0, 5)).chunk)).toBe('hello');
  const watch = await fs.watchMissing([join(scratch, 'AGENTS.md')]);
  expect(watch.watching).toBe(true);

  proxy.drop();
  expect(await watch.ended).toBe('changed');
  await waitFor(() => client.state === 'ready', { what: 'the session to be resumed' });

  expect(new TextDecoder().decode(await fs.readFile(file))).toBe('hello');
  const lost = await handle.read(0, 5).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(ExecError.is(lost) && lost.code).toBe('notFound');
  await handle.close();

  // A newer watch supersedes the older one, as the server's one watch per connection.
  const first = await fs.watchMissing([join(scratch, 'one')]);
  const second = await fs.watchMissing([join(scratch, 'two')]);
  expect(await first.ended).toBe('superseded');
  await writeFile(join(scratch, 'two'), '');
  expect(await second.ended).toBe('changed');
});
