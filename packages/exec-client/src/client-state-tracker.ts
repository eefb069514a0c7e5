import { Emitter, type Logger } from '@execd/protocol';
import type { ClientState } from './client-state.ts';

/** A client's {@link ClientState}, its failure message, and the listeners of its changes. */
export class ClientStateTracker {
  readonly #logger: Logger;
  readonly #sessionId: () => string;
  readonly #changes: Emitter<ClientState>;
  #state: ClientState = 'ready';
  #failure: string | undefined;

  /** `sessionId` is read for the debug log of each change. */
  constructor(logger: Logger, sessionId: () => string) {
    this.#logger = logger;
    this.#sessionId = sessionId;
    this.#changes = new Emitter(logger);
  }

  /** Where the client is. */
  get current(): ClientState {
    return this.#state;
  }

  /** The failure message once recovery failed. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Calls `listener` on every state change; dispose the result to stop. */
  onChange(listener: (state: ClientState) => void): Disposable {
    return this.#changes.event(listener);
  }

  /** Records why the client failed (before it moves to `failed`). */
  recordFailure(message: string): void {
    this.#failure = message;
  }

  /** Moves to `state` and tells the listeners; nothing leaves `closed`. */
  set(state: ClientState): void {
    if (this.#state === state || this.#state === 'closed') return;
    this.#logger.debug('exec-server client state', {
      from: this.#state,
      to: state,
      sessionId: this.#sessionId(),
    });
    this.#state = state;
    this.#changes.fire(state);
  }
}
