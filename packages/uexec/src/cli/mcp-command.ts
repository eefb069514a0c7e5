import { locateBwrap } from '@execd/sandboxing';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { mcpElicitationApprover } from '../mcp/mcp-approver.ts';
import { createUnifiedExecMcpServer } from '../mcp/mcp-server.ts';
import { UnaskedApprovals } from '../mcp/unasked-approvals.ts';
import type { CliOptions } from './cli-args.ts';
import { type CliSession, openCliSession } from './cli-session.ts';
import { reapOnSignals } from './signals.ts';

/** What confines commands, in words: the profile and, locally, the mechanism that enforces it. */
function sandboxDescription(options: CliOptions): string {
  if (options.sandbox === 'danger-full-access') return 'no sandbox (danger-full-access)';
  if (options.remote !== undefined) return `${options.sandbox} (enforced by the execd-server)`;
  if (process.platform === 'darwin') return `${options.sandbox} (Seatbelt)`;
  if (process.platform !== 'linux') return `${options.sandbox} (no sandbox on ${process.platform})`;
  const bwrap = locateBwrap();
  return bwrap === undefined
    ? `${options.sandbox} (bubblewrap not found on PATH: sandboxed commands will fail)`
    : `${options.sandbox} (bubblewrap ${bwrap})`;
}

/** The line `uexec mcp` prints on stderr at start (MCP hosts show it in their server logs). */
export function mcpStartLine(options: CliOptions, session: CliSession, version: string): string {
  const where =
    options.remote === undefined
      ? `in ${session.environment.settings.cwd}`
      : `on ${options.remote} in ${session.environment.settings.cwd}`;
  const names = session.tools
    .specs()
    .map((spec) => spec.name)
    .join(', ');
  return (
    `uexec ${version} mcp: serving ${names} over stdio; commands run ${where}; ` +
    `sandbox ${sandboxDescription(options)}; approval ${options.approval}; ` +
    `shell snapshot ${options.shellSnapshot ? 'on' : 'off'}\n`
  );
}

/** `uexec mcp`: serves the tools over stdio until the client goes away. */
export async function runMcp(options: CliOptions, version: string): Promise<number> {
  let server: Server | undefined;
  let session: CliSession | undefined;
  reapOnSignals(() => session);
  const unasked = new UnaskedApprovals();
  session = await openCliSession(
    options,
    mcpElicitationApprover(() => server, { onUnasked: () => unasked.mark() }),
  );
  const mcp = createUnifiedExecMcpServer({
    tools: session.tools,
    version,
    unaskedApprovals: unasked,
  });
  server = mcp.server;
  process.stderr.write(mcpStartLine(options, session, version));
  mcp.server.oninitialized = () => {
    if (options.approval === 'never' || mcp.server.getClientCapabilities()?.elicitation !== undefined) return;
    process.stderr.write(
      `uexec mcp: this client does not support elicitation: commands that need approval (--approval ${options.approval}) will be refused\n`,
    );
  };
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    mcp.server.onclose = () => resolve();
  });
  try {
    await mcp.connect(new StdioServerTransport());
    await ended;
  } finally {
    await mcp.close().catch(() => undefined);
    await session.close();
  }
  return 0;
}
