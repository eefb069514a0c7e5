import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Notes, per tool call, whether an approval was needed but nobody could be asked (an MCP client
 * without elicitation), so the call's refusal can say so instead of `rejected by user`. The
 * approver runs inside the call's async context, which is how a mark finds its call.
 */
export class UnaskedApprovals {
  readonly #calls = new AsyncLocalStorage<{ unasked: boolean }>();

  /** Runs one tool call; `unasked` says whether an approval in it went unasked. */
  async track<T>(call: () => Promise<T>): Promise<{ readonly value: T; readonly unasked: boolean }> {
    const state = { unasked: false };
    const value = await this.#calls.run(state, call);
    return { value, unasked: state.unasked };
  }

  /** Records that the current call's approval could not be asked. */
  mark(): void {
    const state = this.#calls.getStore();
    if (state !== undefined) state.unasked = true;
  }
}

/** The answer to a call refused because its approval could not be asked. */
export function noElicitationText(toolName: string, approvalPolicy: string): string {
  return (
    `${toolName} was not run: it needs approval (--approval ${approvalPolicy}), and uexec mcp asks ` +
    'for approvals through MCP elicitation, which this client does not support, so nobody was ' +
    'asked. Use a client with elicitation, or start uexec mcp with --approval never (commands ' +
    'then run without asking, inside the --sandbox profile).'
  );
}
