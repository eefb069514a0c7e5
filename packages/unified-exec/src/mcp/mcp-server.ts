import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UnifiedExecTools } from '../handlers/unified-exec-tools.ts';
import { toMcpTool } from '../tools/tool-exporters.ts';

/** Options of {@link createUnifiedExecMcpServer}. */
export interface UnifiedExecMcpServerOptions {
  /** The tools to expose (their manager owns the processes). */
  readonly tools: UnifiedExecTools;
  /** Server name reported to clients (default `uexec`). */
  readonly name?: string | undefined;
  readonly version?: string | undefined;
}

/**
 * An MCP server exposing exec_command and write_stdin with the original's schemas: a call
 * answers with the tool-result text as one text content, `isError` set for argument and manager
 * errors. Connect it to a transport (`StdioServerTransport` for `uexec mcp`).
 */
export function createUnifiedExecMcpServer(options: UnifiedExecMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'uexec', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  // Raw handlers on the underlying server: the tool schemas are JSON Schema already.
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: options.tools.specs().map((spec) => toMcpTool(spec)),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = await options.tools.call(request.params.name, request.params.arguments ?? {});
    return { content: [{ type: 'text' as const, text: result.text }], isError: !result.success };
  });
  return server;
}
