import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP tool annotations (hints for the client's UI and its own approval prompts). A shell command
 * can do anything the sandbox allows, writing to a command can too, and a patch may delete
 * files: none is read-only or idempotent; commands reach the world, a patch only the workspace.
 */
const ANNOTATIONS: Readonly<Record<string, ToolAnnotations>> = {
  exec_command: {
    title: 'Run a shell command',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  write_stdin: {
    title: 'Write to (or poll) a running command',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  apply_patch: {
    title: 'Edit files with a patch',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
};

/** The annotations of a tool, or undefined for a tool this file does not know. */
export function toolAnnotations(name: string): ToolAnnotations | undefined {
  const annotations = ANNOTATIONS[name];
  return annotations === undefined ? undefined : { ...annotations };
}
