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

/** A rule that matched, or the heuristics' verdict on a command no rule matched. */
export type RuleMatch =
  | {
      readonly type: 'prefixRule';
      readonly matchedPrefix: readonly string[];
      readonly decision: Decision;
      readonly justification: string | undefined;
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

/**
 * A set of prefix rules keyed by program (the original's execpolicy `Policy`). Immutable:
 * {@link withPrefixRule} returns a new policy, so an evaluation never sees a half-applied update.
 */
export class ExecPolicy {
  readonly #rules: ReadonlyMap<string, readonly PrefixRule[]>;

  constructor(rules: Iterable<PrefixRule> = []) {
    const byProgram = new Map<string, PrefixRule[]>();
    for (const rule of rules) {
      const list = byProgram.get(rule.program) ?? [];
      list.push(rule);
      byProgram.set(rule.program, list);
    }
    this.#rules = byProgram;
  }

  /** Every rule, in the order added per program. */
  get rules(): PrefixRule[] {
    return [...this.#rules.values()].flat();
  }

  /** This policy plus one rule for the exact words of `prefix` (the original's `add_prefix_rule`). */
  withPrefixRule(prefix: readonly string[], decision: Decision): ExecPolicy {
    const [program, ...rest] = prefix;
    if (program === undefined) throw new RangeError('prefix cannot be empty');
    return new ExecPolicy([...this.rules, { program, rest, decision }]);
  }

  /** The rules matching `command`; with a fallback, a heuristics verdict when none does. */
  matchesFor(command: readonly string[], fallback?: HeuristicsFallback): RuleMatch[] {
    const first = command[0];
    const matches: RuleMatch[] = [];
    for (const rule of first === undefined ? [] : (this.#rules.get(first) ?? [])) {
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
    if (matches.length === 0 && fallback !== undefined) {
      return [{ type: 'heuristics', command: [...command], decision: fallback(command) }];
    }
    return matches;
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
