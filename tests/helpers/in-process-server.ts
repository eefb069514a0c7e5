// An execd server in this process (the public `startExecServer`) plus connected clients, all
// closed by one `close()`.
import { ExecServerClient } from '@execd/exec-client';
import { type ExecServerOptions, type RunningExecServer, startExecServer } from '@execd/exec-server/server';
import type { CodecName } from '@execd/protocol';

/** A server on 127.0.0.1:0 and the clients a test opened on it. */
export class TestServer implements AsyncDisposable {
  readonly server: RunningExecServer;
  readonly #clients = new Set<ExecServerClient>();

  private constructor(server: RunningExecServer) {
    this.server = server;
  }

  static async start(options: ExecServerOptions = {}): Promise<TestServer> {
    return new TestServer(await startExecServer({ listen: 'ws://127.0.0.1:0', ...options }));
  }

  get url(): string {
    return this.server.url;
  }

  /** `http://` base for /readyz and /metrics. */
  get httpUrl(): string {
    return this.server.url.replace(/^ws:/, 'http:');
  }

  /** Connects a client (closed with the server). */
  async client(codec: CodecName = 'msgpack', url: string = this.url): Promise<ExecServerClient> {
    const client = await ExecServerClient.connect({ url, codec });
    this.#clients.add(client);
    return client;
  }

  /** Closes every client, then the server (which kills every process tree). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#clients].map((client) => client.close()));
    this.#clients.clear();
    await this.server.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Parses one sample (`name{labels} value`) out of Prometheus text; 0 when absent. */
export function metricValue(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').filter((part) => part.length > 0);
    if (wanted.every((label) => have.includes(label))) return Number(match[3]);
  }
  return 0;
}
