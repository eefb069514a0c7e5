/** What a rule (or the fallback heuristics) says about a command, weakest first. */
export type Decision = 'allow' | 'prompt' | 'forbidden';

const DECISION_RANK: Record<Decision, number> = { allow: 0, prompt: 1, forbidden: 2 };

/** The stronger of two decisions (forbidden > prompt > allow). */
export function strongerDecision(a: Decision, b: Decision): Decision {
  return DECISION_RANK[a] >= DECISION_RANK[b] ? a : b;
}

/** One token of a prefix pattern: a word, or one of several words. */
export type PatternToken = string | readonly string[];

/** A rule matching commands whose argv starts with its pattern. */
export interface PrefixRule {
  /** The program (first word, compared exactly). */
  readonly program: string;
  /** The following tokens. */
  readonly rest: readonly PatternToken[];
  readonly decision: Decision;
  /** Why the rule exists; shown in prompt and rejection texts. */
  readonly justification?: string | undefined;
}

/** The protocols a `network_rule` names (the original's `NetworkRuleProtocol`). */
export type NetworkRuleProtocol = 'http' | 'https' | 'socks5_tcp' | 'socks5_udp';

/**
 * A `network_rule`: what a managed network does with a host (`allow` adds it to the allowed
 * domains, `forbidden` to the denied ones, `prompt` leaves it to the approval question).
 */
export interface NetworkRule {
  /** Normalised: lower case, no port, no trailing dot. */
  readonly host: string;
  readonly protocol: NetworkRuleProtocol;
  readonly decision: Decision;
  readonly justification?: string | undefined;
}

/** The hosts the network rules allow and deny, last rule winning (the original's `compiled_network_domains`). */
export interface CompiledNetworkDomains {
  readonly allowed: readonly string[];
  readonly denied: readonly string[];
}

/** What an ExecPolicy holds besides prefix rules. */
export interface ExecPolicyExtras {
  readonly networkRules?: readonly NetworkRule[] | undefined;
  /** `host_executable(name, paths)`: the absolute paths a program name may stand for. */
  readonly hostExecutables?: ReadonlyMap<string, readonly string[]> | undefined;
}

/** A rule that matched, or the heuristics' verdict on a command no rule matched. */
export type RuleMatch =
  | {
      readonly type: 'prefixRule';
      readonly matchedPrefix: readonly string[];
      readonly decision: Decision;
      readonly justification: string | undefined;
      /** For an absolute program matched by its name's rules: that path. */
      readonly resolvedProgram?: string | undefined;
    }
  | { readonly type: 'heuristics'; readonly command: readonly string[]; readonly decision: Decision };

/** The verdict on one or more commands: the strongest decision and everything that matched. */
export interface Evaluation {
  readonly decision: Decision;
  readonly matchedRules: readonly RuleMatch[];
}

/** Decides a command no rule matched. */
export type HeuristicsFallback = (command: readonly string[]) => Decision;

function tokenMatches(token: PatternToken, word: string): boolean {
  return typeof token === 'string' ? token === word : token.includes(word);
}

function prefixMatches(rules: readonly PrefixRule[], command: readonly string[]): RuleMatch[] {
  const matches: RuleMatch[] = [];
  for (const rule of rules) {
    const length = rule.rest.length + 1;
    if (command.length < length) continue;
    if (!rule.rest.every((token, index) => tokenMatches(token, command[index + 1] as string))) continue;
    matches.push({
      type: 'prefixRule',
      matchedPrefix: command.slice(0, length),
      decision: rule.decision,
      justification: rule.justification,
    });
  }
  return matches;
}

/** The last path component of an absolute program (the original's `executable_path_lookup_key`, unix). */
function absoluteProgramName(program: string): string | undefined {
  if (!program.startsWith('/')) return undefined;
  const name = program.slice(program.lastIndexOf('/') + 1);
  return name.length === 0 || name === '.' || name === '..' ? undefined : name;
}

/**
 * A set of prefix rules keyed by program, with the network rules and host executables of the same
 * files (the original's execpolicy `Policy`). Immutable: {@link withPrefixRule} returns a new
 * policy, so an evaluation never sees a half-applied update.
 */
export class ExecPolicy {
  readonly #rules: ReadonlyMap<string, readonly PrefixRule[]>;
  readonly #networkRules: readonly NetworkRule[];
  readonly #hostExecutables: ReadonlyMap<string, readonly string[]>;

  constructor(rules: Iterable<PrefixRule> = [], extras: ExecPolicyExtras = {}) {
    const byProgram = new Map<string, PrefixRule[]>();
    for (const rule of rules) {
      const list = byProgram.get(rule.program) ?? [];
      list.push(rule);
      byProgram.set(rule.program, list);
    }
    this.#rules = byProgram;
    this.#networkRules = [...(extras.networkRules ?? [])];
    this.#hostExecutables = new Map(extras.hostExecutables ?? []);
  }

  /** Every rule, in the order added per program. */
  get rules(): PrefixRule[] {
    return [...this.#rules.values()].flat();
  }

  /** The `network_rule`s, in file order. */
  get networkRules(): readonly NetworkRule[] {
    return this.#networkRules;
  }

  /** The `host_executable` paths by program name. */
  get hostExecutables(): ReadonlyMap<string, readonly string[]> {
    return this.#hostExecutables;
  }

  /** This policy plus one rule for the exact words of `prefix` (the original's `add_prefix_rule`). */
  withPrefixRule(prefix: readonly string[], decision: Decision): ExecPolicy {
    const [program, ...rest] = prefix;
    if (program === undefined) throw new RangeError('prefix cannot be empty');
    return new ExecPolicy([...this.rules, { program, rest, decision }], {
      networkRules: this.#networkRules,
      hostExecutables: this.#hostExecutables,
    });
  }

  /**
   * The hosts a managed network allows and denies by these rules: `allow` and `forbidden` (`deny`)
   * rules in order, a later rule for a host replacing an earlier one; `prompt` rules add nothing.
   */
  compiledNetworkDomains(): CompiledNetworkDomains {
    let allowed: string[] = [];
    let denied: string[] = [];
    for (const rule of this.#networkRules) {
      if (rule.decision === 'allow') {
        denied = denied.filter((host) => host !== rule.host);
        allowed = [...allowed.filter((host) => host !== rule.host), rule.host];
      } else if (rule.decision === 'forbidden') {
        allowed = allowed.filter((host) => host !== rule.host);
        denied = [...denied.filter((host) => host !== rule.host), rule.host];
      }
    }
    return { allowed, denied };
  }

  /**
   * The rules matching `command`; with a fallback, a heuristics verdict when none does. An
   * absolute program no rule names exactly is matched by the rules of its file name, unless a
   * `host_executable` for that name lists other paths (the original with `resolve_host_executables`,
   * as Codex evaluates commands).
   */
  matchesFor(command: readonly string[], fallback?: HeuristicsFallback): RuleMatch[] {
    const first = command[0];
    let matches = first === undefined ? [] : prefixMatches(this.#rules.get(first) ?? [], command);
    if (matches.length === 0 && first !== undefined) matches = this.#hostExecutableMatches(first, command);
    if (matches.length === 0 && fallback !== undefined) {
      return [{ type: 'heuristics', command: [...command], decision: fallback(command) }];
    }
    return matches;
  }

  #hostExecutableMatches(program: string, command: readonly string[]): RuleMatch[] {
    const name = absoluteProgramName(program);
    const rules = name === undefined ? undefined : this.#rules.get(name);
    if (name === undefined || rules === undefined) return [];
    const paths = this.#hostExecutables.get(name);
    if (paths !== undefined && !paths.includes(program)) return [];
    return prefixMatches(rules, [name, ...command.slice(1)]).map((match) => ({
      ...match,
      resolvedProgram: program,
    }));
  }

  /** Evaluates several commands together (the original's `check_multiple`): strongest decision wins. */
  check(commands: readonly (readonly string[])[], fallback: HeuristicsFallback): Evaluation {
    const matchedRules = commands.flatMap((command) => this.matchesFor(command, fallback));
    const decision = matchedRules.reduce<Decision>(
      (strongest, match) => strongerDecision(strongest, match.decision),
      'allow',
    );
    return { decision, matchedRules };
  }
}
