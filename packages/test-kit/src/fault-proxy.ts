import { once } from 'node:events';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { httpHeadEnd, WsFrameSplitter } from './ws-frame-splitter.ts';

/** Which way traffic flows through the proxy. */
export type ProxyDirection = 'toServer' | 'toClient';

/** A direction, or both. */
export type ProxyDirections = ProxyDirection | 'both';

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** `ws://host:port` of the exec-server behind the proxy. */
  readonly target: string;
  /** Listen host (default 127.0.0.1). */
  readonly host?: string;
}

/** Counters of a proxy. */
export interface FaultProxyStats {
  /** Connections accepted and forwarded. */
  readonly accepted: number;
  /** Connections refused while refusing. */
  readonly refused: number;
  /** Connections currently open. */
  readonly open: number;
  /** WebSocket frames forwarded, per direction. */
  readonly frames: Readonly<Record<ProxyDirection, number>>;
}

function directions(which: ProxyDirections): ProxyDirection[] {
  return which === 'both' ? ['toServer', 'toClient'] : [which];
}

/** One direction of one proxied connection: HTTP head first, then frame by frame. */
class Lane {
  readonly #proxy: FaultProxy;
  readonly #direction: ProxyDirection;
  readonly #source: Socket;
  readonly #out: Socket;
  readonly #pair: Pair;
  readonly #splitter = new WsFrameSplitter();
  readonly #queue: Buffer[] = [];
  #head: Buffer | undefined = Buffer.alloc(0);
  #raw = false;
  #delaying = false;

  constructor(proxy: FaultProxy, direction: ProxyDirection, source: Socket, out: Socket, pair: Pair) {
    this.#proxy = proxy;
    this.#direction = direction;
    this.#source = source;
    this.#out = out;
    this.#pair = pair;
  }

  /**
   * Paused: stop reading the source socket too, so the sender feels TCP backpressure as on a
   * stalled network (its kernel buffers fill, then its own send buffer grows).
   */
  applyPause(): void {
    if (this.#proxy.isPaused(this.#direction)) this.#source.pause();
    else if (this.#pair.started) this.#source.resume();
  }

  feed(bytes: Buffer): void {
    if (this.#raw) {
      this.#out.write(bytes);
      return;
    }
    if (this.#head !== undefined) {
      const head = Buffer.concat([this.#head, bytes]);
      const end = httpHeadEnd(head);
      if (end < 0) {
        this.#head = head;
        return;
      }
      this.#head = undefined;
      this.#out.write(head.subarray(0, end));
      // A refused upgrade (401, 403, ...) is not followed by frames: pass the rest through.
      if (
        this.#direction === 'toClient' &&
        !/^HTTP\/1\.1 101/.test(head.subarray(0, 12).toString('latin1'))
      ) {
        this.#raw = true;
        this.#out.write(head.subarray(end));
        return;
      }
      bytes = head.subarray(end);
    }
    this.#queue.push(...this.#splitter.push(bytes));
    this.pump();
  }

  /** Forwards queued frames unless paused or delaying; applies a pending cut. */
  pump(): void {
    while (this.#queue.length > 0 && !this.#delaying && !this.#pair.destroyed && !this.#pair.cut) {
      if (this.#proxy.isPaused(this.#direction)) return;
      const frame = this.#queue.shift()!;
      if (this.#proxy.takeCut(this.#direction)) {
        this.#pair.cut = true;
        this.#out.write(frame.subarray(0, Math.max(1, frame.length >> 1)), () => this.#pair.destroy(false));
        return;
      }
      const delayMs = this.#proxy.delayOf(this.#direction);
      if (delayMs > 0) {
        this.#delaying = true;
        const timer = setTimeout(() => {
          this.#delaying = false;
          this.#send(frame);
          this.pump();
        }, delayMs);
        this.#pair.timers.add(timer);
        return;
      }
      this.#send(frame);
    }
  }

  #send(frame: Buffer): void {
    if (this.#pair.destroyed || this.#pair.cut) return;
    this.#proxy.countFrame(this.#direction);
    this.#out.write(frame);
  }
}

/** A client connection and its upstream connection. */
class Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly lanes: Lane[];
  readonly timers = new Set<NodeJS.Timeout>();
  destroyed = false;
  /** A frame was cut: nothing more is forwarded; the sockets close once the half frame is out. */
  cut = false;
  /** The upstream connection is up: the client socket may be read. */
  started = false;
  readonly #onGone: (pair: Pair) => void;

  constructor(proxy: FaultProxy, client: Socket, upstream: Socket, onGone: (pair: Pair) => void) {
    this.client = client;
    this.upstream = upstream;
    this.#onGone = onGone;
    const toServer = new Lane(proxy, 'toServer', client, upstream, this);
    const toClient = new Lane(proxy, 'toClient', upstream, client, this);
    this.lanes = [toServer, toClient];
    client.on('data', (bytes: Buffer) => toServer.feed(bytes));
    upstream.on('data', (bytes: Buffer) => toClient.feed(bytes));
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => this.destroy(false));
    }
  }

  /** Tears both sockets down; `reset` sends a TCP RST instead of a FIN. Idempotent. */
  destroy(reset: boolean): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const socket of [this.client, this.upstream]) {
      if (reset && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
    }
    this.#onGone(this);
  }
}

/**
 * A WebSocket fault injector for tests: listens on 127.0.0.1:0 and forwards every connection to
 * `target` frame by frame (HTTP upgrade passed through verbatim, frames never decoded), and on
 * command pauses a direction, delays frames, drops every connection abruptly (TCP RST, no close
 * frame), cuts the next frame in half and closes the socket, or refuses new connections for a
 * while. Controls apply to every connection, current and future.
 */
export class FaultProxy implements AsyncDisposable {
  /** `ws://127.0.0.1:PORT` to connect clients to. */
  readonly url: string;
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  readonly #paused: Record<ProxyDirection, boolean> = { toServer: false, toClient: false };
  readonly #delayMs: Record<ProxyDirection, number> = { toServer: 0, toClient: 0 };
  readonly #cuts: Record<ProxyDirection, (() => void)[]> = { toServer: [], toClient: [] };
  readonly #frames: Record<ProxyDirection, number> = { toServer: 0, toClient: 0 };
  #refuseUntilMs = 0;
  #accepted = 0;
  #refused = 0;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Starts a proxy in front of `options.target`. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const target = new URL(options.target);
    const targetPort = Number(target.port || 80);
    const server = createServer();
    const host = options.host ?? '127.0.0.1';
    server.listen(0, host);
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('fault proxy: no TCP address');
    const proxy = new FaultProxy(server, `ws://${host}:${address.port}`);
    server.on('connection', (client) => proxy.#accept(client, target.hostname, targetPort));
    return proxy;
  }

  get stats(): FaultProxyStats {
    return {
      accepted: this.#accepted,
      refused: this.#refused,
      open: this.#pairs.size,
      frames: { ...this.#frames },
    };
  }

  /**
   * Holds frames going `which` way (queued, nothing is lost) until `resume`, and stops reading
   * from their sender, which then feels TCP backpressure as on a stalled network.
   */
  pause(which: ProxyDirections = 'both'): void {
    for (const direction of directions(which)) this.#paused[direction] = true;
    this.#pumpAll();
  }

  /** Forwards held frames and lets traffic flow again. */
  resume(which: ProxyDirections = 'both'): void {
    for (const direction of directions(which)) this.#paused[direction] = false;
    this.#pumpAll();
  }

  /** Delays every frame going `which` way by `ms` (order is kept); 0 removes the delay. */
  setDelay(ms: number, which: ProxyDirections = 'both'): void {
    for (const direction of directions(which)) this.#delayMs[direction] = Math.max(0, ms);
  }

  /** Destroys every open connection at once (TCP RST, no WebSocket close frame); held frames are lost. */
  drop(): void {
    for (const pair of [...this.#pairs]) pair.destroy(true);
  }

  /**
   * The next frame going `which` way (on any connection) is cut: its first half is written, then
   * that connection's sockets are closed. Resolves once it happened.
   */
  cutMidFrame(which: ProxyDirection = 'toClient'): Promise<void> {
    return new Promise((resolve) => {
      this.#cuts[which].push(resolve);
      this.#pumpAll();
    });
  }

  /** Refuses (destroys at once) new connections for `ms` milliseconds, or until `acceptConnections()`. */
  refuseConnections(ms: number = Number.POSITIVE_INFINITY): void {
    this.#refuseUntilMs = performance.now() + ms;
  }

  /** Stops refusing new connections. */
  acceptConnections(): void {
    this.#refuseUntilMs = 0;
  }

  /** Stops listening and destroys every connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.drop();
      await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** @internal */
  isPaused(direction: ProxyDirection): boolean {
    return this.#paused[direction];
  }

  /** @internal */
  delayOf(direction: ProxyDirection): number {
    return this.#delayMs[direction];
  }

  /** @internal Consumes a pending cut for `direction`, if any. */
  takeCut(direction: ProxyDirection): boolean {
    const resolve = this.#cuts[direction].shift();
    if (resolve === undefined) return false;
    queueMicrotask(resolve);
    return true;
  }

  /** @internal */
  countFrame(direction: ProxyDirection): void {
    this.#frames[direction] += 1;
  }

  #pumpAll(): void {
    for (const pair of this.#pairs) {
      for (const lane of pair.lanes) {
        lane.applyPause();
        lane.pump();
      }
    }
  }

  #accept(client: Socket, host: string, port: number): void {
    client.on('error', () => {});
    if (this.#closing !== undefined || performance.now() < this.#refuseUntilMs) {
      this.#refused += 1;
      client.resetAndDestroy();
      return;
    }
    this.#accepted += 1;
    client.pause();
    const upstream = tcpConnect({ host, port });
    const pair = new Pair(this, client, upstream, (gone) => this.#pairs.delete(gone));
    this.#pairs.add(pair);
    upstream.once('connect', () => {
      pair.started = true;
      for (const lane of pair.lanes) lane.applyPause();
    });
  }
}
