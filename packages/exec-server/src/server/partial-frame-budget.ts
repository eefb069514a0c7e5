/**
 * A frame is large once this much of it has arrived without completing (default 256 KiB): from
 * then on it needs a place in the budget to go on.
 */
export const LARGE_PARTIAL_FRAME_BYTES: number = 256 * 1024;
/**
 * Bytes of large frames being received that all connections together may hold (default 16 MiB).
 * The first large frame is always let in, whatever its size (up to the frame limit).
 */
export const PARTIAL_FRAMES_BUDGET_BYTES: number = 16 * 1024 * 1024;
/**
 * An admitted frame that has grown by less than {@link PARTIAL_FRAME_PROGRESS_BYTES} for this
 * long while others wait gives its room up (default 5 s): a peer that starts large frames and
 * stalls, or trickles them, must not hold every other connection's large frames back.
 */
export const PARTIAL_FRAME_STALL_MS: number = 5_000;
/** Growth that counts as progress against stalling (64 KiB: one socket read). */
export const PARTIAL_FRAME_PROGRESS_BYTES: number = 64 * 1024;

/**
 * Something that holds large frames back for a while (the heap policy, while the garbage of the
 * last large frames is still to be collected).
 */
export interface PartialFrameHold {
  /** Large frames wait while this is true. */
  held(): boolean;
  /** Calls `listener` whenever `held()` may have become false; returns the unsubscription. */
  subscribe(listener: () => void): () => void;
}

/** Options of {@link PartialFrameBudget}. */
export interface PartialFrameBudgetOptions {
  readonly largeFrameBytes?: number;
  readonly budgetBytes?: number;
  readonly hold?: PartialFrameHold | undefined;
  readonly stallMs?: number;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** What a connection does when its large frame must wait, and when it may go on. */
export interface PartialFrameReader {
  pause(): void;
  resume(): void;
}

/** The raw socket of a connection, as {@link PartialFrameBudget.attach} reads it. */
export interface MeteredSocket {
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** Counters of a {@link PartialFrameBudget}. */
export interface PartialFrameBudgetStats {
  /** Bytes of the large frames being received now. */
  readonly admittedBytes: number;
  /** Connections whose large frame waits for room, or for the hold to end. */
  readonly waiting: number;
  /** Times a connection had to stop reading, since the budget was made. */
  readonly waits: number;
  /** The most bytes of large frames ever received at once. */
  readonly peakBytes: number;
  /** Admitted frames that gave their room up after stalling while others waited. */
  readonly stalls: number;
}

/**
 * One server's bound on the memory held by frames still arriving, and by the garbage of frames
 * that arrived. A frame is buffered whole before it can be parsed; without a bound, every
 * connection streaming a frame up to the 64 MiB limit at once holds that much (a few hundred
 * connections: gigabytes). Small frames never wait. A connection whose frame grows past
 * `largeFrameBytes` is admitted only while the large frames being received stay within
 * `budgetBytes` (the first one always); otherwise it stops reading (TCP pushes back on its
 * client) until room is made, first come first served. Admitted frames keep growing: once they
 * exceed the budget together, all but the oldest stop at their next read, so the oldest always
 * completes and makes room. While the `hold` holds (the heap policy: the copies a large frame
 * leaves behind, several times its size, are still to be collected), every large frame stops at
 * its next read, and goes on when it ends. A frame that stops growing for `stallMs` while
 * others wait gives its room up (a peer that starts large frames and stalls cannot block the
 * others); it keeps what it holds, and asks for room anew when it grows again. Memory held by
 * arriving frames: at most `budgetBytes` plus the oldest frame, plus one read per connection,
 * plus what stalled frames hold (bytes their peers did send).
 */
export class PartialFrameBudget {
  readonly #largeFrameBytes: number;
  readonly #budgetBytes: number;
  readonly #admitted = new Set<PartialFrameMeter>();
  /** Admitted frames stopped: by the hold, or while the budget is exceeded. */
  readonly #held = new Set<PartialFrameMeter>();
  readonly #waiting: PartialFrameMeter[] = [];
  readonly #hold: PartialFrameHold | undefined;
  readonly #unsubscribe: (() => void) | undefined;
  readonly #stallMs: number;
  readonly #now: () => number;
  #stallCheck: NodeJS.Timeout | undefined;
  #stalls = 0;
  #admittedBytes = 0;
  #peakBytes = 0;
  #waits = 0;
  #closed = false;

  constructor(options: PartialFrameBudgetOptions = {}) {
    this.#largeFrameBytes = options.largeFrameBytes ?? LARGE_PARTIAL_FRAME_BYTES;
    this.#budgetBytes = options.budgetBytes ?? PARTIAL_FRAMES_BUDGET_BYTES;
    this.#hold = options.hold;
    this.#stallMs = options.stallMs ?? PARTIAL_FRAME_STALL_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#unsubscribe = this.#hold?.subscribe(() => this.#reconsider());
  }

  /** A meter for one connection's inbound bytes; `close()` it when the connection ends. */
  meter(reader: PartialFrameReader): PartialFrameMeter {
    return new PartialFrameMeter(this, reader, this.#largeFrameBytes, this.#now);
  }

  /**
   * A meter counting every read of `socket` and closed with it. Attach it after the WebSocket
   * library's own listener: a read that completes a frame is then counted after `completed()`.
   */
  attach(socket: MeteredSocket, reader: PartialFrameReader): PartialFrameMeter {
    const meter = this.meter(reader);
    socket.on('data', (chunk) => meter.received(chunk.byteLength));
    socket.once('close', () => meter.close());
    return meter;
  }

  stats(): PartialFrameBudgetStats {
    return {
      admittedBytes: this.#admittedBytes,
      peakBytes: this.#peakBytes,
      stalls: this.#stalls,
      waiting: this.#waiting.length + this.#held.size,
      waits: this.#waits,
    };
  }

  /** Stops bounding: every waiting connection reads again, and later frames never wait (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#stallCheck);
    this.#stallCheck = undefined;
    this.#unsubscribe?.();
    this.#reconsider();
  }

  /** @internal A meter's frame became large: may it go on? */
  request(meter: PartialFrameMeter, bytes: number): boolean {
    if (this.#waiting.length === 0 && this.#fits(bytes)) {
      this.#admitted.add(meter);
      this.#add(bytes);
      return true;
    }
    this.#waiting.push(meter);
    this.#waits += 1;
    this.#watchStalls();
    return false;
  }

  /** @internal An admitted frame grew by `bytes`: may it go on reading? */
  grew(meter: PartialFrameMeter, bytes: number): boolean {
    this.#add(bytes);
    if (this.#mayGrow(meter)) return true;
    this.#held.add(meter);
    this.#waits += 1;
    this.#watchStalls();
    return false;
  }

  /** @internal A meter's frame completed, or its connection closed. */
  release(meter: PartialFrameMeter, bytes: number): void {
    this.#held.delete(meter);
    if (this.#admitted.delete(meter)) this.#admittedBytes -= bytes;
    else {
      const at = this.#waiting.indexOf(meter);
      if (at >= 0) this.#waiting.splice(at, 1);
    }
    this.#reconsider();
  }

  /** Lets held frames read again, then admits waiting ones in order while they fit. */
  #reconsider(): void {
    for (const meter of [...this.#held]) {
      if (!this.#mayGrow(meter)) continue;
      this.#held.delete(meter);
      meter.resumed();
    }
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0] as PartialFrameMeter;
      if (!this.#fits(next.partialBytes)) break;
      this.#waiting.shift();
      this.#admitted.add(next);
      this.#add(next.partialBytes);
      next.resumed();
    }
  }

  /**
   * Whether an admitted frame may read on: not while the hold holds; the oldest one always
   * otherwise; the others while all admitted frames together stay within the budget (they were
   * admitted small and grow).
   */
  #mayGrow(meter: PartialFrameMeter): boolean {
    if (this.#holding()) return false;
    if (this.#closed || this.#admittedBytes <= this.#budgetBytes) return true;
    return this.#admitted.values().next().value === meter;
  }

  /** While connections wait, checks every `stallMs` for admitted frames that stopped growing. */
  #watchStalls(): void {
    if (this.#stallCheck !== undefined || this.#closed) return;
    this.#stallCheck = setTimeout(() => {
      this.#stallCheck = undefined;
      this.#setAsideStalled();
    }, this.#stallMs);
    this.#stallCheck.unref();
  }

  #setAsideStalled(): void {
    if (this.#closed || (this.#waiting.length === 0 && this.#held.size === 0)) return;
    const now = this.#now();
    for (const meter of [...this.#admitted]) {
      // A frame we stopped is not stalled; its clock restarts when it may read again.
      if (this.#held.has(meter) || now - meter.lastGrewAt < this.#stallMs) continue;
      this.#admitted.delete(meter);
      this.#admittedBytes -= meter.partialBytes;
      this.#stalls += 1;
      meter.setAside();
    }
    this.#reconsider();
    if (this.#waiting.length > 0 || this.#held.size > 0) this.#watchStalls();
  }

  #add(bytes: number): void {
    this.#admittedBytes += bytes;
    if (this.#admittedBytes > this.#peakBytes) this.#peakBytes = this.#admittedBytes;
  }

  #holding(): boolean {
    return !this.#closed && this.#hold?.held() === true;
  }

  #fits(bytes: number): boolean {
    if (this.#closed) return true;
    if (this.#holding()) return false;
    return this.#admitted.size === 0 || this.#admittedBytes + bytes <= this.#budgetBytes;
  }
}

/** One connection's bytes since its last complete frame (see {@link PartialFrameBudget}). */
export class PartialFrameMeter {
  readonly #budget: PartialFrameBudget;
  readonly #reader: PartialFrameReader;
  readonly #largeFrameBytes: number;
  readonly #now: () => number;
  #partial = 0;
  /** The frame's size when it last made progress, and when that was. */
  #progressBytes = 0;
  #lastGrewAt = 0;
  /** small: not counted yet; admitted: counted, reading; stopped: waiting or held (not reading). */
  #state: 'small' | 'admitted' | 'stopped' | 'closed' = 'small';
  #counted = false;

  /** @internal */
  constructor(
    budget: PartialFrameBudget,
    reader: PartialFrameReader,
    largeFrameBytes: number,
    now: () => number,
  ) {
    this.#budget = budget;
    this.#reader = reader;
    this.#largeFrameBytes = largeFrameBytes;
    this.#now = now;
  }

  /** When the frame last grew by a read's worth, or was last let go on. */
  get lastGrewAt(): number {
    return this.#lastGrewAt;
  }

  get partialBytes(): number {
    return this.#partial;
  }

  /** Bytes read from the connection (frame headers and control frames included). */
  received(bytes: number): void {
    if (this.#state === 'closed') return;
    this.#partial += bytes;
    if (this.#partial - this.#progressBytes >= PARTIAL_FRAME_PROGRESS_BYTES) this.#progressed();
    if (this.#state === 'admitted') {
      if (!this.#budget.grew(this, bytes)) this.#stop();
    } else if (this.#state === 'small' && this.#partial >= this.#largeFrameBytes) {
      this.#counted = true;
      if (this.#budget.request(this, this.#partial)) this.#state = 'admitted';
      else this.#stop();
    }
  }

  /** A frame completed: what arrives next belongs to the next one. */
  completed(): void {
    if (this.#state === 'closed') return;
    const wasStopped = this.#end();
    // The frame ended while it waited (the rest was already read): the connection reads on.
    if (wasStopped && this.#state === 'stopped') {
      this.#state = 'small';
      this.#reader.resume();
    } else this.#state = 'small';
  }

  /** The connection ended (idempotent): its room, or its place in line, goes to others. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#end();
    this.#state = 'closed';
  }

  /** @internal Room was made, or the hold ended: read again. */
  resumed(): void {
    if (this.#state !== 'stopped') return;
    this.#state = 'admitted';
    this.#progressed();
    this.#reader.resume();
  }

  #progressed(): void {
    this.#progressBytes = this.#partial;
    this.#lastGrewAt = this.#now();
  }

  /**
   * @internal The frame stalled while others waited: its room went to them. What it holds stays
   * with it; when it grows again it asks for room anew (and waits for it).
   */
  setAside(): void {
    this.#counted = false;
    this.#state = 'small';
  }

  #stop(): void {
    this.#state = 'stopped';
    this.#reader.pause();
  }

  /** Gives the frame's bytes back; returns whether the connection was stopped. */
  #end(): boolean {
    const wasStopped = this.#state === 'stopped';
    if (this.#counted) this.#budget.release(this, this.#partial);
    this.#counted = false;
    this.#partial = 0;
    this.#progressBytes = 0;
    return wasStopped;
  }
}
