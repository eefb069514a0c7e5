import type { Decision, PatternToken, PrefixRule } from './policy.ts';
import { ExecPolicy, type NetworkRule } from './policy.ts';
import { hostExecutable, networkRule } from './rules-builtins.ts';
import { splitShellWords } from './shell-words.ts';

/** A `.rules` file that cannot be read as rules; `line` is 1-based. */
export class RulesSyntaxError extends Error {
  override name = 'RulesSyntaxError';
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: ${detail} (problem is on or around line ${line})`);
  }
}

type Value = string | number | boolean | null | Value[];
type Token =
  | { kind: 'name'; text: string; line: number }
  | { kind: 'string'; value: string; line: number }
  | { kind: 'number'; value: number; line: number }
  | { kind: 'punct'; text: string; line: number }
  | { kind: 'end'; line: number };

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
};

function tokenize(file: string, source: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  const fail = (detail: string): never => {
    throw new RulesSyntaxError(file, line, detail);
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') i++;
    else if (c === '#') while (i < source.length && source[i] !== '\n') i++;
    else if (c === '\\' && source[i + 1] === '\n') i += 2;
    else if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < source.length && /\w/.test(source[i] as string)) i++;
      tokens.push({ kind: 'name', text: source.slice(start, i), line });
    } else if (/\d/.test(c)) {
      const start = i;
      while (i < source.length && /\d/.test(source[i] as string)) i++;
      tokens.push({ kind: 'number', value: Number(source.slice(start, i)), line });
    } else if (c === '"' || c === "'") {
      const triple = source.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      const startLine = line;
      i += quote.length;
      let value = '';
      for (;;) {
        if (i >= source.length) fail('unterminated string literal');
        if (source.startsWith(quote, i)) break;
        const d = source[i] as string;
        if (d === '\n') {
          if (!triple) fail('unterminated string literal');
          line++;
        }
        if (d === '\\') {
          const e = source[i + 1] ?? '';
          if (e === '\n') line++;
          value += e === '\n' ? '' : (ESCAPES[e] ?? `\\${e}`);
          i += 2;
        } else {
          value += d;
          i++;
        }
      }
      i += quote.length;
      tokens.push({ kind: 'string', value, line: startLine });
    } else if ('()[],='.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
    } else fail(`unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: 'end', line });
  return tokens;
}

// The parameters of the builtins, in positional order.
const PARAMETERS: Record<string, readonly string[]> = {
  prefix_rule: ['pattern', 'decision', 'match', 'not_match', 'justification'],
  network_rule: ['host', 'protocol', 'decision', 'justification'],
  host_executable: ['name', 'paths'],
};

/**
 * Reads `.rules` files in the original's format (a Starlark subset: calls of `prefix_rule`,
 * `network_rule` and `host_executable` with literal arguments, `#` comments). `prefix_rule`
 * patterns, decisions (`allow` by default, `prompt`, `forbidden`), justifications and the
 * `match` / `not_match` examples are honoured; `network_rule`s feed a managed network's allowed
 * and denied hosts; `host_executable(name, paths)` limits which absolute paths the rules of
 * `name` cover. Later files add to earlier ones (a later `host_executable` replaces one of the
 * same name).
 */
export class RulesParser {
  readonly #rules: PrefixRule[] = [];
  readonly #networkRules: NetworkRule[] = [];
  readonly #hostExecutables = new Map<string, readonly string[]>();

  /** Parses one file; throws {@link RulesSyntaxError} naming the file and line. */
  parse(file: string, source: string): void {
    const tokens = tokenize(file, source);
    let at = 0;
    const peek = (): Token => tokens[at] as Token;
    const next = (): Token => tokens[at++] as Token;
    const fail = (token: Token, detail: string): never => {
      throw new RulesSyntaxError(file, token.line, detail);
    };
    const expect = (text: string): void => {
      const token = next();
      if (token.kind !== 'punct' || token.text !== text) fail(token, `expected \`${text}\``);
    };
    const value = (): Value => {
      const token = next();
      if (token.kind === 'string' || token.kind === 'number') return token.value;
      if (token.kind === 'name' && (token.text === 'True' || token.text === 'False'))
        return token.text === 'True';
      if (token.kind === 'name' && token.text === 'None') return null;
      if (token.kind === 'punct' && token.text === '[') {
        const items: Value[] = [];
        while (!(peek().kind === 'punct' && (peek() as { text: string }).text === ']')) {
          items.push(value());
          const separator = peek();
          if (separator.kind === 'punct' && separator.text === ',') next();
          else break;
        }
        expect(']');
        return items;
      }
      return fail(token, 'expected a string, a number or a list');
    };
    const added: PrefixRule[] = [];
    const examples: { line: number; match: string[][]; notMatch: string[][]; rules: PrefixRule[] }[] = [];
    while (peek().kind !== 'end') {
      const callee = next();
      if (callee.kind !== 'name' || PARAMETERS[callee.text] === undefined) {
        fail(
          callee,
          callee.kind === 'name' ? `Variable \`${callee.text}\` not found` : 'expected a rule call',
        );
      }
      const name = (callee as { text: string }).text;
      const parameters = PARAMETERS[name] as readonly string[];
      expect('(');
      const args: Record<string, Value> = {};
      let position = 0;
      while (!(peek().kind === 'punct' && (peek() as { text: string }).text === ')')) {
        const first = peek();
        const second = tokens[at + 1] as Token;
        let key: string;
        if (first.kind === 'name' && second.kind === 'punct' && second.text === '=') {
          key = first.text;
          at += 2;
          if (!parameters.includes(key))
            fail(first, `${name}() got an unexpected keyword argument \`${key}\``);
        } else {
          key = parameters[position++] ?? fail(first, `too many positional arguments to ${name}()`);
        }
        if (key in args) fail(first, `${name}() got multiple values for \`${key}\``);
        args[key] = value();
        const separator = peek();
        if (separator.kind === 'punct' && separator.text === ',') next();
        else break;
      }
      expect(')');
      const failHere = (detail: string): never => fail(callee, detail);
      if (name === 'network_rule') {
        this.#networkRules.push(networkRule(args, failHere));
        continue;
      }
      if (name === 'host_executable') {
        const [program, paths] = hostExecutable(args, failHere);
        this.#hostExecutables.set(program, paths);
        continue;
      }
      const rules = prefixRules(args, (detail) => fail(callee, detail));
      added.push(...rules);
      examples.push({
        line: callee.line,
        match: exampleList(args.match, (detail) => fail(callee, detail)),
        notMatch: exampleList(args.not_match, (detail) => fail(callee, detail)),
        rules,
      });
    }
    for (const { line, match, notMatch, rules } of examples) {
      const policy = new ExecPolicy(rules, { hostExecutables: this.#hostExecutables });
      for (const example of notMatch) {
        if (policy.matchesFor(example).length > 0) {
          throw new RulesSyntaxError(file, line, `rule matches a not_match example: ${example.join(' ')}`);
        }
      }
      for (const example of match) {
        if (policy.matchesFor(example).length === 0) {
          throw new RulesSyntaxError(file, line, `rule does not match a match example: ${example.join(' ')}`);
        }
      }
    }
    this.#rules.push(...added);
  }

  /** The policy of every file parsed so far. */
  build(): ExecPolicy {
    return new ExecPolicy(this.#rules, {
      networkRules: this.#networkRules,
      hostExecutables: this.#hostExecutables,
    });
  }
}

function prefixRules(args: Record<string, Value>, fail: (detail: string) => never): PrefixRule[] {
  const pattern = args.pattern;
  if (!Array.isArray(pattern)) return fail('prefix_rule() requires a `pattern` list');
  const tokens: PatternToken[] = pattern.map((item) => {
    if (typeof item === 'string') return item;
    if (Array.isArray(item) && item.length > 0 && item.every((alt) => typeof alt === 'string')) {
      return item.length === 1 ? (item[0] as string) : (item as string[]);
    }
    return fail('pattern element must be a string or non-empty list of strings');
  });
  const [first, ...rest] = tokens;
  if (first === undefined) return fail('pattern cannot be empty');
  const rawDecision = args.decision ?? 'allow';
  if (rawDecision !== 'allow' && rawDecision !== 'prompt' && rawDecision !== 'forbidden') {
    return fail(`invalid decision: ${String(rawDecision)}`);
  }
  const decision: Decision = rawDecision;
  const justification = args.justification;
  if (justification !== undefined && justification !== null) {
    if (typeof justification !== 'string' || justification.trim().length === 0) {
      return fail('justification cannot be empty');
    }
  }
  const programs = typeof first === 'string' ? [first] : first;
  return programs.map((program) => ({
    program,
    rest,
    decision,
    justification: typeof justification === 'string' ? justification : undefined,
  }));
}

function exampleList(value: Value | undefined, fail: (detail: string) => never): string[][] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail('examples must be a list');
  return value.map((example) => {
    if (typeof example === 'string') {
      const words = splitShellWords(example);
      if (words === undefined) return fail('example string has invalid shell syntax');
      if (words.length === 0) return fail('example cannot be an empty string');
      return words;
    }
    if (Array.isArray(example) && example.length > 0 && example.every((word) => typeof word === 'string')) {
      return example as string[];
    }
    return fail('example must be a string or a non-empty list of strings');
  });
}
