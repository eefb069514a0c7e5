// Records what a server answers to raw JSON-RPC scripts (test/helpers/raw-ws-client.ts, json
// codec), normalised so that two servers' transcripts can be compared: session UUIDs, pids,
// version strings and base64 chunk boundaries do not count.
import { waitFor } from '@execd/test-kit';
import { RawWsClient } from '../helpers/raw-ws-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Replaces what legitimately differs between runs and servers. */
export function normalise(value: unknown, sessionIds: readonly string[] = []): unknown {
  if (typeof value === 'string') {
    let text = value;
    for (const [index, id] of sessionIds.entries()) text = text.split(id).join(`<session-${index + 1}>`);
    return UUID.test(text) ? '<uuid>' : text;
  }
  if (Array.isArray(value)) return value.map((item) => normalise(item, sessionIds));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, item]) => [key, normalise(item, sessionIds)]),
    );
  }
  return value;
}

/** One step of a transcript. */
export type Entry = Record<string, unknown>;

/** Runs raw requests against one server and records normalised answers. */
export class Transcriber implements AsyncDisposable {
  readonly url: string;
  readonly entries: Entry[] = [];
  readonly #clients: RawWsClient[] = [];
  readonly #sessionIds: string[] = [];

  constructor(url: string) {
    this.url = url;
  }

  /** Opens a raw JSON connection. */
  async connect(): Promise<RawWsClient> {
    const client = await RawWsClient.connect(this.url);
    this.#clients.push(client);
    return client;
  }

  /** A connection that completed initialize + initialized (optionally resuming). */
  async session(resumeSessionId?: string): Promise<RawWsClient> {
    const client = await this.connect();
    const id = client.request('initialize', {
      clientName: 'execd-compat',
      resumeSessionId: resumeSessionId ?? null,
    });
    const reply = await client.response(id);
    // Only whether it worked is recorded here; the handshake scenario records a full answer.
    this.entries.push({ session: resumeSessionId === undefined ? 'new' : 'resumed', ok: 'result' in reply });
    const sessionId = (reply.result as { sessionId?: string } | undefined)?.sessionId;
    if (sessionId !== undefined && !this.#sessionIds.includes(sessionId)) this.#sessionIds.push(sessionId);
    client.notify('initialized', {});
    return client;
  }

  /** The first session id this transcript saw. */
  get sessionId(): string {
    return this.#sessionIds[0] ?? '';
  }

  /** Records a note (a value computed by the scenario). */
  note(label: string, value: unknown): void {
    this.entries.push({ note: label, value: normalise(value, this.#sessionIds) });
  }

  /** Sends a request, waits for its answer, records both; returns the raw answer. */
  async call(client: RawWsClient, method: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = client.request(method, params);
    const reply = await client.response(id);
    const { id: _id, ...rest } = reply;
    this.entries.push({ call: method, params: normalise(params), reply: this.#shape(method, rest) });
    return reply;
  }

  /**
   * Reads a process until it is closed; records the stdout/stderr text, the exit code and the last
   * answer (without chunks), so chunk boundaries do not matter.
   */
  async readUntilClosed(client: RawWsClient, processId: string): Promise<void> {
    let afterSeq = 0;
    const text: Record<string, string> = {};
    for (;;) {
      const id = client.request('process/read', { processId, afterSeq, maxBytes: null, waitMs: 1_000 });
      const reply = await client.response(id);
      if ('error' in reply) {
        this.entries.push({ readUntilClosed: processId, error: reply.error });
        return;
      }
      const result = reply.result as {
        chunks: { stream: string; chunk: string }[];
        nextSeq: number;
        closed: boolean;
      };
      for (const chunk of result.chunks) {
        text[chunk.stream] = (text[chunk.stream] ?? '') + Buffer.from(chunk.chunk, 'base64').toString('utf8');
      }
      afterSeq = result.nextSeq - 1;
      if (result.closed) {
        const { chunks: _chunks, ...last } = result;
        this.entries.push({ readUntilClosed: processId, text: normalise(text), last: normalise(last) });
        return;
      }
    }
  }

  /** Waits for `process/closed` of `processId` on `client`; records its notifications by seq. */
  async notifications(client: RawWsClient, processId: string): Promise<void> {
    const of = () =>
      client
        .notifications()
        .filter((n) => (n.params as { processId?: string } | undefined)?.processId === processId);
    await waitFor(() => of().some((n) => n.method === 'process/closed'), { what: `${processId} closed` });
    const sorted = of().sort((a, b) => (a.params as { seq: number }).seq - (b.params as { seq: number }).seq);
    // Adjacent output chunks of one stream are joined: how a child's writes are split is not protocol.
    const merged: Record<string, unknown>[] = [];
    for (const n of sorted) {
      const params = n.params as Record<string, unknown>;
      const previous = merged.at(-1);
      if (
        n.method === 'process/output' &&
        previous?.method === 'process/output' &&
        previous.stream === params.stream
      ) {
        previous.text = `${previous.text}${Buffer.from(params.chunk as string, 'base64').toString('utf8')}`;
        continue;
      }
      if (n.method === 'process/output') {
        merged.push({
          method: n.method,
          stream: params.stream,
          text: Buffer.from(params.chunk as string, 'base64').toString('utf8'),
        });
      } else {
        const { processId: _p, seq: _s, ...rest } = params;
        merged.push({ method: n.method, ...rest });
      }
    }
    this.entries.push({ notifications: processId, events: normalise(merged) });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const client of this.#clients.reverse()) await client.close().catch(() => {});
  }

  #shape(method: string, reply: Record<string, unknown>): unknown {
    const result = reply.result as Record<string, unknown> | undefined;
    // Environment descriptions differ by value (versions, paths): compare their keys only.
    if (result !== undefined && method === 'environment/info') {
      return { result: { keys: Object.keys(result).sort(), capabilities: normalise(result.capabilities) } };
    }
    if (result !== undefined && method === 'initialize') {
      const info = result.environmentInfo as Record<string, unknown> | undefined;
      return {
        result: {
          ...(normalise({ ...result, environmentInfo: undefined }, this.#sessionIds) as object),
          ...(info === undefined ? {} : { environmentInfoKeys: Object.keys(info).sort() }),
        },
      };
    }
    return normalise(reply, this.#sessionIds);
  }
}

/** A difference between two transcripts. */
export interface Difference {
  readonly scenario: string;
  readonly path: string;
  readonly execd: unknown;
  readonly original: unknown;
}

/** Every path where two normalised values differ. */
export function diff(scenario: string, execd: unknown, original: unknown, path = ''): Difference[] {
  if (JSON.stringify(execd) === JSON.stringify(original)) return [];
  const bothObjects =
    typeof execd === 'object' && execd !== null && typeof original === 'object' && original !== null;
  if (!bothObjects || Array.isArray(execd) !== Array.isArray(original)) {
    return [{ scenario, path: path || '/', execd, original }];
  }
  // Lists of plain values (key lists) and lists of different lengths are compared whole.
  if (
    Array.isArray(execd) &&
    (execd.length !== (original as unknown[]).length ||
      execd.some((item) => typeof item !== 'object' || item === null))
  ) {
    return [{ scenario, path: path || '/', execd, original }];
  }
  const a = execd as Record<string, unknown>;
  const b = original as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.flatMap((key) => diff(scenario, a[key], b[key], `${path}/${key}`));
}
