// A WebSocket server whose every answer a test scripts: for checking exactly what the client puts
// on the wire (ids, params, retries) and how it reacts to answers a real server rarely gives.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createJsonCodec, createMsgpackCodec, type RpcMessage } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { WebSocket, WebSocketServer } from 'ws';

const json = createJsonCodec();
const msgpack = createMsgpackCodec();

/** One client connection as the script sees it. */
export class Peer {
  readonly index: number;
  readonly socket: WebSocket;
  /** Every message received on this connection, decoded. */
  readonly received: Record<string, unknown>[] = [];
  /** Whether each received frame was binary. */
  readonly binary: boolean[] = [];

  constructor(index: number, socket: WebSocket) {
    this.index = index;
    this.socket = socket;
  }

  /** Sends one message as a JSON text frame (the original server's way). */
  send(message: RpcMessage): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(json.encodeText(message));
  }

  respond(id: unknown, result: unknown): void {
    this.send({ kind: 'response', id: id as number, result });
  }

  error(id: unknown, code: number, message: string): void {
    this.send({ kind: 'error', id: id as number, error: { code, message } });
  }

  notify(method: string, params: unknown): void {
    this.send({ kind: 'notification', method, params });
  }

  /** Destroys the TCP connection (no close frame). */
  drop(): void {
    this.socket.terminate();
  }

  /** Waits for the first received message matching `predicate`. */
  next(
    predicate: (message: Record<string, unknown>) => boolean,
    what = 'a message',
  ): Promise<Record<string, unknown>> {
    return waitFor(() => this.received.find(predicate), { what });
  }

  request(method: string): Promise<Record<string, unknown>> {
    return this.next((m) => m.method === method && 'id' in m, method);
  }
}

/** Called for every message received; the default answers `initialize` with session `s-1`. */
export type Script = (peer: Peer, message: Record<string, unknown>) => void;

/** Answers `initialize` (with `sessionId`) and ignores everything else. */
export function answerInitialize(peer: Peer, message: Record<string, unknown>, sessionId = 's-1'): boolean {
  if (message.method !== 'initialize') return false;
  peer.respond(message.id, { sessionId });
  return true;
}

/** A scripted exec-server on 127.0.0.1:0. */
export class ScriptedServer implements AsyncDisposable {
  readonly url: string;
  readonly peers: Peer[] = [];
  readonly #wss: WebSocketServer;

  private constructor(wss: WebSocketServer, url: string) {
    this.#wss = wss;
    this.url = url;
  }

  static async start(script: Script): Promise<ScriptedServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const server = new ScriptedServer(wss, `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    wss.on('connection', (socket) => {
      const peer = new Peer(server.peers.length, socket);
      server.peers.push(peer);
      socket.on('error', () => {});
      socket.on('message', (data, isBinary) => {
        const bytes = data as Buffer;
        const message = (isBinary ? msgpack.decodeValue(bytes) : json.decodeValue(bytes)) as Record<
          string,
          unknown
        >;
        peer.received.push(message);
        peer.binary.push(isBinary);
        script(peer, message);
      });
    });
    return server;
  }

  /** Waits until `count` connections were made. */
  async connections(count: number): Promise<Peer> {
    return waitFor(() => this.peers[count - 1], { what: `connection ${count}` });
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
