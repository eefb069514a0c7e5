// @execd/uexec: the `uexec` CLI (bin) and the MCP server for @execd/unified-exec's tools.
// This entry is the MCP server API for hosts that serve the tools over their own MCP transport;
// the MCP SDK is this package's dependency, never the library's.

export { approvalMessage, mcpElicitationApprover } from './mcp/mcp-approver.ts';
export { createUnifiedExecMcpServer, type UnifiedExecMcpServerOptions } from './mcp/mcp-server.ts';
export { UnaskedApprovals } from './mcp/unasked-approvals.ts';
