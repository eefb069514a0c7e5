import {
  type ApprovalDecision,
  type ApprovalRequest,
  type Approver,
  alwaysDecision,
  shlexJoin,
  visibleText,
} from '@execd/unified-exec';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

/**
 * The question shown to the person behind the MCP client. What the model chose (command, cwd,
 * reason) goes through {@link visibleText}: the client may render it on a terminal or in rich
 * text, where escape sequences, carriage returns or bidi overrides would hide what is approved.
 */
export function approvalMessage(request: ApprovalRequest): string {
  const what = request.purpose === 'sandbox_retry' ? 'Retry without the sandbox' : 'Run';
  const reason = request.reason === undefined ? '' : `\nReason: ${visibleText(request.reason)}`;
  const command = visibleText(shlexJoin(request.command));
  return `${what} this command?\n${command}\nin ${visibleText(request.cwd)}${reason}`;
}

/**
 * An Approver that asks through MCP elicitation when the connected client supports it, and
 * denies otherwise (nobody to ask; `onUnasked` hears of it). `server` is read at call time, so it may be set after the
 * approver is handed to the manager.
 */
export function mcpElicitationApprover(
  server: () => Server | undefined,
  options: { readonly onUnasked?: ((request: ApprovalRequest) => void) | undefined } = {},
): Approver {
  return async (request): Promise<ApprovalDecision> => {
    const mcp = server();
    if (mcp?.getClientCapabilities()?.elicitation === undefined) {
      // Nobody to ask: `onUnasked` lets the answer say so rather than "rejected by user".
      options.onUnasked?.(request);
      return 'denied';
    }
    const always = alwaysChoice(request);
    const result = await mcp.elicitInput({
      message: approvalMessage(request),
      // The form the person fills in: the answers the original offers for this request.
      requestedSchema: {
        type: 'object',
        properties: {
          decision: {
            type: 'string',
            title: 'Decision',
            description: `approve runs it once; ${always === undefined ? '' : `${always.value} ${always.description}; `}deny refuses.`,
            enum: ['approve', ...(always === undefined ? [] : [always.value]), 'deny'],
          },
        },
        required: ['decision'],
      },
    });
    if (result.action === 'cancel') return 'abort';
    if (result.action !== 'accept') return 'denied';
    const decision = (result.content as { decision?: unknown } | undefined)?.decision;
    if (decision === 'approve') return 'approved';
    if (always !== undefined && decision === always.value) return always.decision;
    return 'denied';
  };
}

/**
 * The request's "always" answer as an elicitation choice: `approve_for_session` (a network host,
 * for the session) or `approve_always` (the offered prefix becomes an allow rule).
 */
function alwaysChoice(
  request: ApprovalRequest,
): { value: string; description: string; decision: ApprovalDecision } | undefined {
  const decision = alwaysDecision(request);
  if (decision === 'approved_for_session') {
    return { value: 'approve_for_session', description: 'also allows this host for the session', decision };
  }
  if (decision === 'approved_execpolicy_amendment') {
    const prefix = visibleText(shlexJoin(request.proposedExecpolicyAmendment ?? []));
    return {
      value: 'approve_always',
      description: `also allows commands that start with \`${prefix}\` from now on`,
      decision,
    };
  }
  return undefined;
}
