// @execd/unified-exec: the agent-facing exec_command / write_stdin tools.
// This entry exports the pure core (output formatting, truncation, tool specs, argument parsing)
// and the runtime. No MCP server here: that and the `uexec` CLI are in @execd/uexec.

export { type ApplyPatchInvocation, parseApplyPatchInvocation } from './apply-patch/invocation.ts';
export { LocalPatchFileSystem, type LocalWriteScope } from './apply-patch/local-patch-fs.ts';
export {
  type Hunk,
  type ParsedPatch,
  PatchParseError,
  parsePatch,
  type UpdateFileChunk,
} from './apply-patch/parser.ts';
export { type PatchFileMetadata, type PatchFileSystem, PatchFsError } from './apply-patch/patch-fs.ts';
export { seekSequence } from './apply-patch/seek-sequence.ts';
export {
  CHUNK_ID_LENGTH,
  DEFAULT_EXEC_YIELD_TIME_MS,
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_WRITE_STDIN_YIELD_TIME_MS,
  EARLY_EXIT_GRACE_PERIOD_MS,
  INTERRUPT_INPUT,
  LATE_NETWORK_DENIAL_GRACE_PERIOD_MS,
  MAX_EXEC_OUTPUT_DELTAS_PER_CALL,
  MAX_UNIFIED_EXEC_PROCESSES,
  MAX_YIELD_TIME_MS,
  MIN_EMPTY_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
  POST_EXIT_CLOSE_WAIT_CAP_MS,
  PROCESS_ID_MAX,
  PROCESS_ID_MIN,
  PRUNE_PROTECTED_RECENT_PROCESSES,
  TRAILING_OUTPUT_GRACE_MS,
  TTY_WRITE_SETTLE_MS,
  UNIFIED_EXEC_OUTPUT_DELTA_MAX_BYTES,
  UNIFIED_EXEC_OUTPUT_MAX_BYTES,
  UNIFIED_EXEC_OUTPUT_MAX_TOKENS,
  WINDOWS_INITIAL_EXEC_YIELD_TIME_FLOOR_MS,
} from './constants.ts';
// Environments: where commands run, and the settings the agent side adds.
export {
  Environment,
  LOCAL_ENVIRONMENT_ID,
  type LocalEnvironmentOptions,
  REMOTE_ENVIRONMENT_ID,
  type RemoteEnvironmentOptions,
} from './environment/environment.ts';
export { EnvironmentManager } from './environment/environment-manager.ts';
export {
  DEFAULT_ENV_POLICY,
  type EnvironmentSettings,
  type EnvironmentSettingsOptions,
  type ManagedNetworkOptions,
} from './environment/environment-settings.ts';
export {
  type SandboxDeniedOutput,
  STDIN_CLOSED_MESSAGE,
  UnifiedExecError,
  type UnifiedExecErrorKind,
} from './errors.ts';
export {
  type ExecApprovalQuery,
  type ExecApprovalRequirement,
  ExecPolicyManager,
  type ExecPolicyManagerOptions,
  FORCED_RM_REJECTION,
  PROMPT_CONFLICT_REASON,
} from './exec-policy/exec-policy-manager.ts';
export {
  type CompiledNetworkDomains,
  type Decision,
  type Evaluation,
  ExecPolicy,
  type ExecPolicyExtras,
  type NetworkRule,
  type NetworkRuleProtocol,
  type PatternToken,
  type PrefixRule,
  type RuleMatch,
} from './exec-policy/policy.ts';
export {
  allowPrefixRuleLine,
  appendAllowPrefixRule,
  DEFAULT_RULES_FILE,
  defaultRulesPath,
  type LoadedRules,
  loadRules,
  RULES_DIR_NAME,
} from './exec-policy/rules-file.ts';
export { RulesParser, RulesSyntaxError } from './exec-policy/rules-parser.ts';
export type { ApplyPatchHandlerOptions } from './handlers/apply-patch-handler.ts';
export type {
  ExecCommandHandlerOptions,
  ToolCallOptions,
} from './handlers/exec-command-handler.ts';
export { errorResult, successResult, type ToolCallResult } from './handlers/tool-call-result.ts';
export type {
  HookToolName,
  PostToolUsePayload,
  PreToolUseAnswer,
  PreToolUseBlock,
  PreToolUseHook,
  PreToolUsePayload,
  ToolHooks,
} from './handlers/tool-hooks.ts';
export {
  abortedCallText,
  type UnifiedExecToolName,
  UnifiedExecTools,
  type UnifiedExecToolsOptions,
} from './handlers/unified-exec-tools.ts';
// How tool texts and approval questions show an argv as one shell-readable line.
export { shlexJoin } from './internal/shlex.ts';
export type { UnifiedExecEvent } from './manager/events.ts';
export {
  UnifiedExecProcessManager,
  type UnifiedExecProcessManagerOptions,
} from './manager/process-manager.ts';
export {
  type ProcessEntry,
  ProcessStore,
  type ProcessStoreOptions,
  type PruneCandidate,
  processIdToPrune,
} from './manager/process-store.ts';
export type { ExecCommandRequest, ProcessListing, WriteStdinRequest } from './manager/requests.ts';
export {
  type ExecCommandToolOutput,
  renderToolOutputJson,
  renderToolOutputText,
} from './manager/tool-output.ts';
// For hosts writing an Approver (the uexec terminal and MCP approvers): `availableDecisions` are
// the answers the original offers for a request, `alwaysDecision` the "don't ask again" one.
export {
  type ApprovalDecision,
  type ApprovalPurpose,
  type ApprovalRequest,
  type Approver,
  alwaysDecision,
  availableDecisions,
  DENY_ALL_APPROVER,
  type NetworkApprovalTarget,
  networkApprovalReason,
  REJECTED_BY_USER,
  SANDBOX_RETRY_REASON,
} from './orchestrator/approval.ts';
export type { PermissionGrant } from './orchestrator/permission-grants.ts';
export {
  type OrchestratorRequest,
  type SandboxAttempt,
  ToolOrchestrator,
  type ToolOrchestratorOptions,
} from './orchestrator/tool-orchestrator.ts';
export { type VisibleTextOptions, visibleJson, visibleText } from './orchestrator/visible-text.ts';
export { generateChunkId } from './output/chunk-id.ts';
export {
  DEFAULT_TURN_TRUNCATION_POLICY,
  type ExecCommandStructuredResult,
  type ExecCommandToolOutputInput,
  execCommandStructuredResult,
  formatExecCommandResponseHeader,
  formatExecCommandToolOutput,
  formatWallTimeSeconds,
  modelOutputPolicy,
  SERIALIZATION_ALLOWANCE,
  truncatedExecOutput,
} from './output/exec-output.ts';
export { formatOutputOmissionMarker, HeadTailBuffer } from './output/head-tail-buffer.ts';
export {
  type OutputPresentation,
  type PresentedOutput,
  presentOutputBytes,
} from './output/present-output.ts';
export {
  type MaskResult,
  MIN_SECRET_VALUE_LENGTH,
  SecretMasker,
  type SecretMaskerOptions,
} from './output/secret-mask.ts';
export {
  hasRedrawSequences,
  RENDER_MAX_LINES,
  renderTerminalText,
  type TerminalSize,
} from './output/terminal-render.ts';
export {
  APPROX_BYTES_PER_TOKEN,
  approxBytesForTokens,
  approxTokenCount,
  approxTokensFromByteCount,
  byteBudget,
  formatTruncationMarker,
  formattedTruncateText,
  scaleTruncationPolicy,
  type TruncationPolicy,
  tokenBudget,
  truncateMiddleChars,
  truncateMiddleWithTokenBudget,
  truncateText,
} from './output/truncation.ts';
export { countLines, decodeUtf8Lossy, encodeUtf8, utf8ByteLength } from './output/utf8.ts';
export { Utf8DeltaSplitter } from './output/utf8-stream.ts';
export { UnifiedExecProcess, type UnifiedExecProcessOptions } from './process/unified-exec-process.ts';
export { buildCommandEnv, type CommandEnv, type CommandEnvOptions } from './runtime/command-env.ts';
export {
  APPLY_PATCH_LARK_GRAMMAR,
  APPLY_PATCH_LARK_GRAMMAR_ENVIRONMENTS,
  applyPatchFreeformToolSpec,
  applyPatchToolSpec,
  type FreeformToolSpec,
} from './tools/apply-patch-spec.ts';
export {
  type AdditionalPermissions,
  type ArgsParseResult,
  type ExecCommandArgs,
  PARSE_ERROR_PREFIX,
  type ParseExecCommandArgsOptions,
  parseExecCommandArgs,
  type SandboxPermissions,
} from './tools/exec-command-args.ts';
export {
  type ApprovalPolicy,
  type ExecCommandPolicyOptions,
  escalationRejectedMessage,
  JUSTIFICATION_WITHOUT_SANDBOX_PERMISSIONS_MESSAGE,
  LOGIN_SHELL_DISABLED_MESSAGE,
  validateExecCommandPolicy,
} from './tools/exec-command-policy.ts';
export {
  applyUnifiedExecEnv,
  type ExecEnvOptions,
  UNIFIED_EXEC_ENV,
  unifiedExecEnv,
} from './tools/exec-env.ts';
export { JsonArgsError } from './tools/json-reader.ts';
export { Shell, type ShellType } from './tools/shell.ts';
export {
  type AnthropicTool,
  type McpTool,
  type OpenAiFunctionTool,
  toAnthropicTool,
  toMcpTool,
  toOpenAiFunctionTool,
} from './tools/tool-exporters.ts';
export {
  type ExecCommandToolOptions,
  execCommandToolSpec,
  type FunctionToolSpec,
  type JsonSchema,
  unifiedExecOutputSchema,
  writeStdinToolSpec,
} from './tools/tool-specs.ts';
export { parseWriteStdinArgs, type WriteStdinArgs } from './tools/write-stdin-args.ts';
export {
  clampExecYieldTime,
  clampWriteStdinYieldTime,
  type ExecYieldOptions,
  resolveMaxWriteStdinYieldTime,
} from './tools/yield-time.ts';
