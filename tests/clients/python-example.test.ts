// The Python example client (docs/examples/python/execd_client.py, standard library only) against
// a real execd-server: over a WebSocket on 127.0.0.1:0 and over the stdio of the built CLI. Every
// frame it exchanged is then checked against the protocol's JSON Schema.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLI_SCRIPT } from '../helpers/cli-server.ts';
import { TestServer } from '../helpers/in-process-server.ts';
import { FrameValidator, type RecordedFrame } from './protocol-schema.ts';

const SCRIPT = resolve(import.meta.dirname, '../../docs/examples/python/execd_client.py');
const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execd-python-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the example; resolves with its output and exit code (a non-zero exit is not an error). */
async function python(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('python3', [SCRIPT, ...args], { timeout: 120_000 });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

async function framesOf(file: string): Promise<RecordedFrame[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedFrame);
}

describe('Python example client', () => {
  test('over a WebSocket: output, stderr and the exit code; every frame matches the JSON Schema', async () => {
    await using server = await TestServer.start();
    const frames = join(dir, 'ws-frames.jsonl');
    const result = await python([
      '--url',
      server.url,
      '--cwd',
      dir,
      '--frames',
      frames,
      '--',
      'sh',
      '-c',
      'echo "hello from $PWD"; echo oops >&2; head -c 100000 /dev/zero | wc -c; exit 3',
    ]);
    expect(result.stdout).toBe(`hello from ${dir}\n100000\nexit code: 3\n`);
    expect(result.stderr).toBe('oops\n');
    expect(result.code).toBe(3);

    const recorded = await framesOf(frames);
    const methods = new Set(recorded.map((f) => f.frame.method).filter((m) => m !== undefined));
    // The server pushed output and exit notifications as well as answering reads.
    expect(methods).toEqual(
      new Set([
        'initialize',
        'initialized',
        'process/start',
        'process/read',
        'process/output',
        'process/exited',
        'process/closed',
      ]),
    );
    const validator = new FrameValidator();
    expect(recorded.flatMap((frame) => validator.check(frame))).toEqual([]);
  });

  test('over the stdio of `execd-server --listen stdio`', async () => {
    const frames = join(dir, 'stdio-frames.jsonl');
    const result = await python([
      '--command',
      `${process.execPath} ${CLI_SCRIPT} --listen stdio --log-level off`,
      '--cwd',
      dir,
      '--frames',
      frames,
      '--',
      'printf',
      '%s\\n',
      'héllo',
    ]);
    expect(result).toEqual({ stdout: 'héllo\nexit code: 0\n', stderr: '', code: 0 });
    const validator = new FrameValidator();
    expect((await framesOf(frames)).flatMap((frame) => validator.check(frame))).toEqual([]);
  });

  test('the schema validator catches a frame that breaks it', () => {
    const validator = new FrameValidator();
    const start = { processId: 'p', argv: ['true'], cwd: 'file:///', env: {}, tty: false };
    expect(validator.check({ dir: 'c>s', frame: { id: 1, method: 'process/start', params: start } })).toEqual(
      [],
    );
    expect(validator.check({ dir: 's>c', frame: { id: 1, result: { processId: 7 } } })).not.toEqual([]);
    expect(
      validator.check({ dir: 's>c', frame: { method: 'process/output', params: { processId: 'p' } } }),
    ).not.toEqual([]);
  });
});
