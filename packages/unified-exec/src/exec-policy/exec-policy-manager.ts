import { shlexJoin } from '../internal/shlex.ts';
import type { SandboxPermissions } from '../tools/exec-command-args.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { loadBashParser, type ShellScriptParser, UNPARSED_SCRIPTS } from './bash-parser.ts';
import { dangerousCommandMatch, isKnownSafeCommand } from './command-safety.ts';
import {
  type Decision,
  type Evaluation,
  ExecPolicy,
  type HeuristicsFallback,
  type RuleMatch,
} from './policy.ts';
import { appendAllowPrefixRule, defaultRulesPath, type LoadedRules, loadRules } from './rules-file.ts';
import { commandsForExecPolicy } from './shell-commands.ts';

/** The question under `never` (the original's PROMPT_CONFLICT_REASON). */
export const PROMPT_CONFLICT_REASON = 'approval required by policy, but AskForApproval is set to Never';

/** The rejection detail of a forced `rm` blocked without a rule (Codex 0.169.0). */
export const FORCED_RM_REJECTION = 'rm -f style commands are not permitted. Use a safer approach';

/**
 * Prefixes never proposed as "always allow" rules: they would approve arbitrary code (the
 * original's BANNED_PREFIX_SUGGESTIONS).
 */
const BANNED_PREFIXES: readonly (readonly string[])[] = [
  ['python3'],
  ['python3', '-'],
  ['python3', '-c'],
  ['python'],
  ['python', '-'],
  ['python', '-c'],
  ['py'],
  ['py', '-3'],
  ['pythonw'],
  ['pyw'],
  ['pypy'],
  ['pypy3'],
  ['git'],
  ['bash'],
  ['bash', '-lc'],
  ['sh'],
  ['sh', '-c'],
  ['sh', '-lc'],
  ['zsh'],
  ['zsh', '-lc'],
  ['/bin/zsh'],
  ['/bin/zsh', '-lc'],
  ['/bin/bash'],
  ['/bin/bash', '-lc'],
  ['pwsh'],
  ['pwsh', '-Command'],
  ['pwsh', '-c'],
  ['powershell'],
  ['powershell', '-Command'],
  ['powershell', '-c'],
  ['powershell.exe'],
  ['powershell.exe', '-Command'],
  ['powershell.exe', '-c'],
  ['env'],
  ['sudo'],
  ['node'],
  ['node', '-e'],
  ['perl'],
  ['perl', '-e'],
  ['ruby'],
  ['ruby', '-e'],
  ['php'],
  ['php', '-r'],
  ['lua'],
  ['lua', '-e'],
  ['osascript'],
];

/** What must happen before a command runs (the original's `ExecApprovalRequirement`). */
export type ExecApprovalRequirement =
  | {
      readonly type: 'skip';
      /** Every command is allowed by a rule: run the first attempt without the sandbox. */
      readonly bypassSandbox: boolean;
      /** A prefix to offer as "always allow" if the sandboxed attempt is denied. */
      readonly proposedAmendment?: readonly string[] | undefined;
    }
  | {
      readonly type: 'needsApproval';
      /** Set when a prompt rule asked (`` `cmd` requires approval… ``). */
      readonly reason?: string | undefined;
      /** The prefix the user may approve for good (the model's `prefix_rule`, or derived). */
      readonly proposedAmendment?: readonly string[] | undefined;
    }
  | { readonly type: 'forbidden'; readonly reason: string };

/** The facts a requirement depends on. */
export interface ExecApprovalQuery {
  /** The argv that would run (shell included). */
  readonly command: readonly string[];
  readonly approvalPolicy: ApprovalPolicy;
  /** False for a full-access profile (nothing confined on the file system). */
  readonly fileSystemRestricted: boolean;
  readonly sandboxPermissions: SandboxPermissions;
  /** The model's `prefix_rule`. */
  readonly prefixRule?: readonly string[] | undefined;
}

/** Options of an ExecPolicyManager. */
export interface ExecPolicyManagerOptions {
  /** The rules to start from (default none). */
  readonly policy?: ExecPolicy | undefined;
  /** Where "always allow" amendments are written (`<codexHome>/rules/default.rules`). */
  readonly codexHome?: string | undefined;
}

/**
 * The exec policy of a session (the original's `ExecPolicyManager`): prefix rules from `.rules`
 * files plus the known-safe and dangerous-command heuristics decide, per command, whether it
 * runs, needs approval or is refused; approved prefixes are added for the session and, when the
 * user says "always", appended to `default.rules`.
 */
export class ExecPolicyManager {
  #policy: ExecPolicy;
  readonly #codexHome: string | undefined;

  constructor(options: ExecPolicyManagerOptions = {}) {
    this.#policy = options.policy ?? new ExecPolicy();
    this.#codexHome = options.codexHome;
    // Start compiling the grammar now, so the first command does not wait for it.
    void loadBashParser().catch(() => undefined);
  }

  /**
   * Loads `<codexHome>/rules/*.rules` (plus `rules/` of each extra folder, lower precedence
   * first). A file that does not parse leaves the policy empty; the error is in `warning`.
   */
  static async load(
    codexHome: string,
    extraConfigFolders: readonly string[] = [],
  ): Promise<{ manager: ExecPolicyManager; loaded: LoadedRules }> {
    const loaded = await loadRules([...extraConfigFolders, codexHome]);
    return { manager: new ExecPolicyManager({ policy: loaded.policy, codexHome }), loaded };
  }

  /** The rules in force. */
  get policy(): ExecPolicy {
    return this.#policy;
  }

  /** Decides what a command needs (the original's `create_exec_approval_requirement_for_command`). */
  async requirementFor(query: ExecApprovalQuery): Promise<ExecApprovalRequirement> {
    // Without a parser nothing is provably simple: each script is judged as its whole argv.
    const parser = await loadBashParser().catch(() => UNPARSED_SCRIPTS);
    const policy = this.#policy;
    const { commands, usedComplexParsing } = commandsForExecPolicy(parser, query.command);
    const fallback: HeuristicsFallback = (command) =>
      unmatchedDecision(parser, command, query, usedComplexParsing);
    const evaluation = policy.check(commands, fallback);
    const amendmentAllowed = !usedComplexParsing;
    switch (evaluation.decision) {
      case 'forbidden':
        return { type: 'forbidden', reason: forbiddenReason(parser, query.command, evaluation) };
      case 'prompt': {
        if (query.approvalPolicy === 'never') return { type: 'forbidden', reason: PROMPT_CONFLICT_REASON };
        const requested = amendmentAllowed
          ? requestedAmendment(query.prefixRule, evaluation, policy, commands, fallback)
          : undefined;
        return {
          type: 'needsApproval',
          reason: promptReason(query.command, evaluation),
          proposedAmendment:
            requested ?? (amendmentAllowed ? promptAmendment(evaluation.matchedRules) : undefined),
        };
      }
      case 'allow':
        return {
          type: 'skip',
          bypassSandbox: commands.every((command) =>
            policy
              .matchesFor(command)
              .some((match) => match.type === 'prefixRule' && match.decision === 'allow'),
          ),
          proposedAmendment: amendmentAllowed ? allowAmendment(evaluation.matchedRules) : undefined,
        };
    }
  }

  /**
   * Allows commands starting with `prefix` from now on in this session; with `persist`, also
   * appends the rule to `<codexHome>/rules/default.rules` (when a Codex home is configured).
   */
  async addAllowPrefix(prefix: readonly string[], options: { persist?: boolean } = {}): Promise<void> {
    if (prefix.length === 0) throw new RangeError('prefix rule requires at least one token');
    if (options.persist && this.#codexHome !== undefined) {
      await appendAllowPrefixRule(defaultRulesPath(this.#codexHome), prefix);
    }
    const existing = this.#policy.check([prefix], () => 'forbidden');
    const alreadyAllowed =
      existing.decision === 'allow' &&
      existing.matchedRules.some((match) => match.type === 'prefixRule' && match.decision === 'allow');
    if (!alreadyAllowed) this.#policy = this.#policy.withPrefixRule(prefix, 'allow');
  }
}

/** The heuristics for a command no rule matched (the original's `render_decision_for_unmatched_command`). */
function unmatchedDecision(
  parser: ShellScriptParser,
  command: readonly string[],
  query: ExecApprovalQuery,
  usedComplexParsing: boolean,
): Decision {
  const policy = query.approvalPolicy;
  if (policy === 'untrusted' && !usedComplexParsing && isKnownSafeCommand(parser, command)) return 'allow';
  if (dangerousCommandMatch(parser, command) !== undefined)
    return policy === 'never' ? 'forbidden' : 'prompt';
  switch (policy) {
    case 'never':
    case 'on-failure':
      return 'allow';
    case 'untrusted':
      return 'prompt';
    case 'on-request':
      // Under a restricted sandbox only a request to leave (or widen) it is asked about.
      return query.fileSystemRestricted && query.sandboxPermissions !== 'use_default' ? 'prompt' : 'allow';
  }
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, index) => word === b[index]);
}

function requestedAmendment(
  prefixRule: readonly string[] | undefined,
  evaluation: Evaluation,
  policy: ExecPolicy,
  commands: readonly (readonly string[])[],
  fallback: HeuristicsFallback,
): readonly string[] | undefined {
  if (prefixRule === undefined || prefixRule.length === 0) return undefined;
  if (BANNED_PREFIXES.some((banned) => sameWords(banned, prefixRule))) return undefined;
  // A rule already decides: an extra allow rule could conflict or not apply.
  if (evaluation.matchedRules.some((match) => match.type === 'prefixRule')) return undefined;
  const widened = policy.withPrefixRule(prefixRule, 'allow');
  const coversAll = commands.every((command) => widened.check([command], fallback).decision === 'allow');
  return coversAll ? [...prefixRule] : undefined;
}

function promptAmendment(matches: readonly RuleMatch[]): readonly string[] | undefined {
  if (matches.some((match) => match.type === 'prefixRule' && match.decision === 'prompt')) return undefined;
  const heuristic = matches.find((match) => match.type === 'heuristics' && match.decision === 'prompt');
  return heuristic?.type === 'heuristics' ? heuristic.command : undefined;
}

function allowAmendment(matches: readonly RuleMatch[]): readonly string[] | undefined {
  if (matches.some((match) => match.type === 'prefixRule')) return undefined;
  const heuristic = matches.find((match) => match.type === 'heuristics' && match.decision === 'allow');
  return heuristic?.type === 'heuristics' ? heuristic.command : undefined;
}

/** The most specific rule of a decision (longest matched prefix; the first of equals). */
function mostSpecific(matches: readonly RuleMatch[], decision: Decision) {
  let best: Extract<RuleMatch, { type: 'prefixRule' }> | undefined;
  for (const match of matches) {
    if (match.type !== 'prefixRule' || match.decision !== decision) continue;
    if (best === undefined || match.matchedPrefix.length > best.matchedPrefix.length) best = match;
  }
  return best;
}

function promptReason(command: readonly string[], evaluation: Evaluation): string | undefined {
  const rule = mostSpecific(evaluation.matchedRules, 'prompt');
  if (rule === undefined) return undefined;
  const shown = shlexJoin(command);
  return rule.justification === undefined
    ? `\`${shown}\` requires approval by policy`
    : `\`${shown}\` requires approval: ${rule.justification}`;
}

function forbiddenReason(
  parser: ShellScriptParser,
  command: readonly string[],
  evaluation: Evaluation,
): string {
  const shown = shlexJoin(command);
  const rule = mostSpecific(evaluation.matchedRules, 'forbidden');
  if (rule !== undefined) {
    return rule.justification === undefined
      ? `\`${shown}\` rejected: policy forbids commands starting with \`${shlexJoin(rule.matchedPrefix)}\``
      : `\`${shown}\` rejected: ${rule.justification}`;
  }
  if (dangerousCommandMatch(parser, command) === 'forcedRm')
    return `\`${shown}\` rejected: ${FORCED_RM_REJECTION}`;
  return `\`${shown}\` rejected: blocked by policy`;
}
