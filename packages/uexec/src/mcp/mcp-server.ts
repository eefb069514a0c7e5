import { toMcpTool, type UnifiedExecTools } from '@execd/unified-exec';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toolAnnotations } from './tool-annotations.ts';
import { noElicitationText, type UnaskedApprovals } from './unasked-approvals.ts';

/** Options of {@link createUnifiedExecMcpServer}. */
export interface UnifiedExecMcpServerOptions {
  /** The tools to expose (their manager owns the processes). */
  readonly tools: UnifiedExecTools;
  /** Server name reported to clients (default `uexec`). */
  readonly name?: string | undefined;
  readonly version?: string | undefined;
  /**
   * Where the approver marks approvals nobody could be asked (see `mcpElicitationApprover`'s
   * `onUnasked`): a call refused for that says so instead of `rejected by user`.
   */
  readonly unaskedApprovals?: UnaskedApprovals | undefined;
}

/**
 * An MCP server exposing exec_command and write_stdin with the original's schemas (plus MCP
 * annotations): a call answers with the tool-result text as one text content, `isError` set for
 * argument and manager errors. Connect it to a transport (`StdioServerTransport` for `uexec mcp`).
 */
export function createUnifiedExecMcpServer(options: UnifiedExecMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'uexec', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  // Raw handlers on the underlying server: the tool schemas are JSON Schema already.
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: options.tools.specs().map((spec) => {
      const annotations = toolAnnotations(spec.name);
      return annotations === undefined ? toMcpTool(spec) : { ...toMcpTool(spec), annotations };
    }),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const call = () => options.tools.call(name, request.params.arguments ?? {});
    const tracked =
      options.unaskedApprovals === undefined
        ? { value: await call(), unasked: false }
        : await options.unaskedApprovals.track(call);
    const result = tracked.value;
    const text =
      tracked.unasked && !result.success
        ? noElicitationText(name, options.tools.manager.approvalPolicy)
        : result.text;
    return { content: [{ type: 'text' as const, text }], isError: !result.success };
  });
  return server;
}
