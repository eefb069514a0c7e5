import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { shlexJoin } from '../internal/shlex.ts';
import type { ApprovalDecision, ApprovalRequest, Approver } from '../orchestrator/approval.ts';
import { visibleText } from '../orchestrator/visible-text.ts';

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
 * denies otherwise (nobody to ask). `server` is read at call time, so it may be set after the
 * approver is handed to the manager.
 */
export function mcpElicitationApprover(server: () => Server | undefined): Approver {
  return async (request): Promise<ApprovalDecision> => {
    const mcp = server();
    if (mcp?.getClientCapabilities()?.elicitation === undefined) return 'denied';
    const result = await mcp.elicitInput({
      message: approvalMessage(request),
      // The form the person fills in.
      requestedSchema: {
        type: 'object',
        properties: {
          decision: {
            type: 'string',
            title: 'Decision',
            description:
              'approve runs it once; approve_for_session approves it for the session too; deny refuses.',
            enum: ['approve', 'approve_for_session', 'deny'],
          },
        },
        required: ['decision'],
      },
    });
    if (result.action === 'cancel') return 'abort';
    if (result.action !== 'accept') return 'denied';
    const decision = (result.content as { decision?: unknown } | undefined)?.decision;
    if (decision === 'approve') return 'approved';
    if (decision === 'approve_for_session') return 'approved_for_session';
    return 'denied';
  };
}
