import type { SandboxType } from '@execd/protocol';
import { InputWaitWatcher } from '@execd/pty-utils';
import type { SpawnResult } from '@execd/sandboxing';
import { UnifiedExecError } from '../errors.ts';
import type { ProcessDriver, ProcessSink } from './process-driver.ts';

/** How long the limit line waits for output still in flight when the command exits. */
const LIMIT_LINE_OUTPUT_WAIT_MS = 250;

/**
 * A child spawned in this Node process by `spawnProcess` (the original's local
 * `ExecCommandSession`): output is read from the start, exit and close come from pty-utils.
 */
export class LocalSpawnDriver implements ProcessDriver {
  readonly sandboxType: SandboxType;
  readonly backendProcessId: undefined = undefined;
  readonly #spawned: SpawnResult;
  #closing: Promise<void> | undefined;
  /** Tty children on Linux: says when the terminal waits for input. */
  #inputWait: InputWaitWatcher | undefined;

  constructor(spawned: SpawnResult) {
    this.#spawned = spawned;
    this.sandboxType = spawned.sandboxType;
  }

  get reportsInputWait(): boolean {
    return this.#inputWait !== undefined;
  }

  attach(sink: ProcessSink): void {
    const child = this.#spawned.process;
    if (child.tty && process.platform === 'linux') {
      this.#inputWait = new InputWaitWatcher(child.pid, { onWaiting: () => sink.waitingForInput() });
    }
    let outputEnded!: () => void;
    const outputDone = new Promise<void>((resolve) => {
      outputEnded = resolve;
    });
    void child.exited.then(async (status) => {
      this.#inputWait?.[Symbol.dispose]();
      // A resource limit the command hit is said as a last line, where the model reads: before
      // the exit is reported (a caller returns at the exit), after the output that was pending.
      const limits = this.#spawned.limits;
      if (limits !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          outputDone,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, LIMIT_LINE_OUTPUT_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
        const hit = await limits.describeHit().catch(() => undefined);
        if (hit !== undefined) sink.output(new TextEncoder().encode(`\nexecd: ${hit}\n`));
      }
      sink.exited(status.exitCode);
    });
    void (async () => {
      try {
        for await (const chunk of child.output()) {
          this.#inputWait?.activity();
          sink.output(chunk.bytes);
        }
      } catch {
        // The reader only fails when the process is torn down; `closed` still settles below.
      }
      outputEnded();
      await child.closed;
      sink.closed();
    })();
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.#inputWait?.activity();
    try {
      await this.#spawned.process.write(bytes);
    } catch (error) {
      throw UnifiedExecError.writeToStdin(error);
    }
  }

  async interrupt(): Promise<void> {
    this.#spawned.process.interrupt();
  }

  async terminate(): Promise<boolean> {
    const child = this.#spawned.process;
    child.kill('SIGKILL');
    await child.exited;
    return true;
  }

  close(): Promise<void> {
    this.#closing ??= this.#spawned.process.close();
    this.#inputWait?.[Symbol.dispose]();
    return this.#closing;
  }
}
