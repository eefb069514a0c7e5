// `execd-server` as a person or a container runtime meets it: --version, `--listen
// ws://localhost:PORT`, and `--require-sandbox` readiness (bubblewrap probed at start).
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliChild, waitFor } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { buildCli } from '../helpers/cli.ts';

let cli: Awaited<ReturnType<typeof buildCli>>;
let emptyDir: string;

beforeAll(async () => {
  cli = await buildCli();
  emptyDir = await mkdtemp(join(tmpdir(), 'execd-cli-empty-'));
}, 120_000);

afterAll(async () => {
  await cli?.remove();
  await rm(emptyDir, { recursive: true, force: true });
});

/** Opens the FIFO for writing once a reader has it open (ENXIO until then). */
async function openWhenRead(fifo: string): Promise<FileHandle> {
  return waitFor(() => open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined), {
    what: `a reader of ${fifo}`,
  });
}

function envWithoutToken(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.EXECD_AUTH_TOKEN;
  return env;
}

/** Polls `/readyz` until `done` accepts the answer (the probe runs in the background). */
async function readyz(
  url: string,
  done: (status: number) => boolean,
): Promise<{ status: number; body: string }> {
  const http = url.replace(/^ws:/, 'http:');
  return waitFor(
    async () => {
      const response = await fetch(`${http}/readyz`);
      const answer = { status: response.status, body: await response.text() };
      return done(answer.status) ? answer : undefined;
    },
    { what: 'the /readyz answer' },
  );
}

describe('execd-server', () => {
  test('--version prints the package version', async () => {
    await using server = new CliChild(cli.script, ['--version']);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout).toBe(`execd-server ${packageJson.version}\n`);
  });

  test('--listen ws://localhost:PORT listens on 127.0.0.1', async () => {
    await using server = new CliChild(cli.script, ['--listen', 'ws://localhost:0', '--log-level', 'off'], {
      env: envWithoutToken(),
    });
    expect(await server.firstLine()).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  test('a SIGTERM while it starts is not lost: it stops once up, exits 0 and announces no URL', async () => {
    // The token file is a FIFO: reading it holds start-up until the test writes the token, so
    // the signal deterministically arrives before the URL (it killed the server outright when
    // the handlers were installed after printing it, also racing whoever reads the URL).
    const fifo = join(emptyDir, 'token.fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    await using server = new CliChild(
      cli.script,
      ['--listen', 'ws://127.0.0.1:0', '--auth-token-file', fifo],
      {
        env: envWithoutToken(),
      },
    );
    await using writer = await openWhenRead(fifo);
    server.child.kill('SIGTERM');
    await waitFor(
      () => {
        if (!server.running) throw new Error(`the server exited while starting: ${server.stderr}`);
        return server.stderr.includes('received signal') ? true : undefined;
      },
      {
        what: 'the signal logged while starting',
      },
    );
    await writer.write('secret-token\n');
    await writer.close();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout).toBe('');
  });

  test.skipIf(process.platform !== 'linux')(
    '--require-sandbox: /readyz is 200 once bubblewrap works, 503 with the reason when it is not found',
    async () => {
      {
        await using server = new CliChild(cli.script, ['--require-sandbox', '--log-level', 'off'], {
          env: envWithoutToken(),
        });
        const url = await server.firstLine();
        expect(await readyz(url, (status) => status !== 503)).toEqual({ status: 200, body: 'ok\n' });
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
      }
      await using server = new CliChild(cli.script, ['--require-sandbox'], {
        env: envWithoutToken({ PATH: emptyDir }),
      });
      const url = await server.firstLine();
      const answer = await readyz(url, () => true);
      expect(answer).toEqual({ status: 503, body: 'not ready: bubblewrap (bwrap) not found on PATH\n' });
      await waitFor(() => server.stderr.includes('sandbox probe failed'), { what: 'the logged failure' });
      // Without the flag, readiness is the original's: 200 once listening.
      await using plain = new CliChild(cli.script, ['--log-level', 'off'], {
        env: envWithoutToken({ PATH: emptyDir }),
      });
      expect(await readyz(await plain.firstLine(), () => true)).toEqual({ status: 200, body: 'ok\n' });
    },
  );
});
