import { ExecError } from '@execd/protocol';
import type { Environment } from './environment.ts';

/**
 * The environments of one agent, by id: one local and any number of remote ones. The first one
 * added is the default until another is named. Closing the manager closes every environment,
 * newest first.
 */
export class EnvironmentManager implements AsyncDisposable {
  readonly #environments = new Map<string, Environment>();
  #defaultId: string | undefined;
  #closing: Promise<void> | undefined;

  /** Adds an environment; `makeDefault` makes it the default. Throws on a duplicate id or after close. */
  add(environment: Environment, options: { readonly makeDefault?: boolean } = {}): Environment {
    if (this.#closing !== undefined)
      throw new ExecError('invalidRequest', 'the environment manager is closed');
    if (this.#environments.has(environment.id)) {
      throw new ExecError('invalidParams', `environment \`${environment.id}\` already exists`);
    }
    this.#environments.set(environment.id, environment);
    if (this.#defaultId === undefined || options.makeDefault) this.#defaultId = environment.id;
    return environment;
  }

  /** The environment with this id, if any. */
  get(id: string): Environment | undefined {
    return this.#environments.get(id);
  }

  /** The environment with this id; a `notFound` ExecError otherwise. */
  require(id: string): Environment {
    const environment = this.#environments.get(id);
    if (environment === undefined) throw new ExecError('notFound', `unknown environment \`${id}\``);
    return environment;
  }

  /** The default environment (the first added unless another was made default). */
  get default(): Environment | undefined {
    return this.#defaultId === undefined ? undefined : this.#environments.get(this.#defaultId);
  }

  /** Makes the environment `id` the default. */
  setDefault(id: string): void {
    this.require(id);
    this.#defaultId = id;
  }

  /** Ids in the order they were added. */
  get ids(): string[] {
    return [...this.#environments.keys()];
  }

  /** Removes and closes one environment (the default moves to the oldest remaining one). */
  async remove(id: string): Promise<void> {
    const environment = this.#environments.get(id);
    if (environment === undefined) return;
    this.#environments.delete(id);
    if (this.#defaultId === id) this.#defaultId = this.#environments.keys().next().value;
    await environment.close();
  }

  /** Closes every environment, newest first; errors are collected into one AggregateError. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #close(): Promise<void> {
    const environments = [...this.#environments.values()].reverse();
    this.#environments.clear();
    this.#defaultId = undefined;
    const errors: unknown[] = [];
    for (const environment of environments) {
      try {
        await environment.close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, 'closing environments failed');
  }
}
