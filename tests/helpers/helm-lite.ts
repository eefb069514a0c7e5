// Renders a Helm chart's templates without helm (not installable on these machines: no network
// to get.helm.sh, no container engine): Go template semantics for the subset the execd-server
// chart uses and nothing more — text with `{{- -}}` trimming, comments, if/else/end, range/end,
// define/include, field paths, parenthesised pipelines, and the functions quote, printf, join,
// toYaml, nindent, indent, default, trunc, trimSuffix, contains. Anything else throws, so the chart
// cannot drift into constructs this renderer would get wrong without a test failing.
import { stringify } from 'yaml';

type Value = unknown;
type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'output'; readonly pipeline: string }
  | { readonly kind: 'if'; readonly pipeline: string; readonly whenTrue: Node[]; readonly otherwise: Node[] }
  | { readonly kind: 'range'; readonly pipeline: string; readonly body: Node[] };

interface Token {
  readonly text?: string;
  readonly action?: string;
}

function tokenize(source: string): Token[] {
  const tokens: { text?: string; action?: string; trimLeft?: boolean; trimRight?: boolean }[] = [];
  const pattern = /\{\{(-\s)?([\s\S]*?)(\s-)?\}\}/g;
  let last = 0;
  for (let match = pattern.exec(source); match !== null; match = pattern.exec(source)) {
    tokens.push({ text: source.slice(last, match.index) });
    tokens.push({
      action: match[2]!.trim(),
      trimLeft: match[1] !== undefined,
      trimRight: match[3] !== undefined,
    });
    last = pattern.lastIndex;
  }
  tokens.push({ text: source.slice(last) });
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.action === undefined) continue;
    const before = tokens[i - 1];
    const after = tokens[i + 1];
    if (token.trimLeft && before?.text !== undefined) before.text = before.text.replace(/\s+$/, '');
    if (token.trimRight && after?.text !== undefined) after.text = after.text.replace(/^\s+/, '');
  }
  return tokens.map(({ text, action }) => (action === undefined ? { text: text ?? '' } : { action }));
}

/** Parses tokens into nodes; `defines` collects `define` blocks. */
function parse(tokens: Token[], defines: Map<string, Node[]>): Node[] {
  let at = 0;
  const block = (terminators: readonly string[]): { nodes: Node[]; ended: string } => {
    const nodes: Node[] = [];
    while (at < tokens.length) {
      const token = tokens[at++]!;
      if (token.action === undefined) {
        if (token.text) nodes.push({ kind: 'text', text: token.text });
        continue;
      }
      const action = token.action;
      if (action.startsWith('/*')) continue;
      const [keyword] = action.split(/\s+/, 1);
      if (terminators.includes(keyword!)) return { nodes, ended: keyword! };
      const rest = action.slice(keyword!.length).trim();
      if (keyword === 'if') {
        const whenTrue = block(['else', 'end']);
        const otherwise = whenTrue.ended === 'else' ? block(['end']).nodes : [];
        nodes.push({ kind: 'if', pipeline: rest, whenTrue: whenTrue.nodes, otherwise });
      } else if (keyword === 'range') {
        nodes.push({ kind: 'range', pipeline: rest, body: block(['end']).nodes });
      } else if (keyword === 'define') {
        defines.set(JSON.parse(rest) as string, block(['end']).nodes);
      } else if (['else', 'end', 'with', 'template', 'block'].includes(keyword!)) {
        throw new Error(`helm-lite: unsupported or misplaced {{ ${action} }}`);
      } else {
        nodes.push({ kind: 'output', pipeline: action });
      }
    }
    if (terminators.length > 0) throw new Error(`helm-lite: missing {{ end }} (${terminators.join('/')})`);
    return { nodes, ended: '' };
  };
  return block([]).nodes;
}

function truthy(value: Value): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value as object).length > 0;
  return true;
}

function show(value: Value): string {
  if (value === undefined || value === null) return '<no value>';
  if (typeof value === 'object') throw new Error('helm-lite: printing a map or list needs toYaml');
  return String(value);
}

/** Splits on `sep` outside quotes and parentheses. */
function splitTop(text: string, sep: RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      current += char;
      if (char === '\\') current += text[++i] ?? '';
      else if (char === '"') quoted = false;
      continue;
    }
    if (char === '"') quoted = true;
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (depth === 0 && sep.test(char)) {
      if (current.trim() !== '') parts.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim() !== '') parts.push(current.trim());
  return parts;
}

export interface ChartContext {
  readonly Values: Record<string, unknown>;
  readonly Release: { Name: string; Namespace: string; Service: string };
  readonly Chart: { Name: string; Version: string; AppVersion: string };
}

export class HelmLite {
  readonly #defines = new Map<string, Node[]>();
  readonly #root: ChartContext;

  constructor(root: ChartContext, helpers: readonly string[]) {
    this.#root = root;
    for (const source of helpers) parse(tokenize(source), this.#defines);
  }

  render(source: string): string {
    return this.#renderNodes(parse(tokenize(source), this.#defines), this.#root);
  }

  #renderNodes(nodes: readonly Node[], dot: Value): string {
    let out = '';
    for (const node of nodes) {
      if (node.kind === 'text') out += node.text;
      else if (node.kind === 'output') out += show(this.#pipeline(node.pipeline, dot));
      else if (node.kind === 'if')
        out += this.#renderNodes(
          truthy(this.#pipeline(node.pipeline, dot)) ? node.whenTrue : node.otherwise,
          dot,
        );
      else {
        const items = this.#pipeline(node.pipeline, dot);
        const list = Array.isArray(items)
          ? items
          : items && typeof items === 'object'
            ? Object.keys(items)
                .sort()
                .map((key) => (items as Record<string, unknown>)[key])
            : [];
        for (const item of list) out += this.#renderNodes(node.body, item);
      }
    }
    return out;
  }

  #pipeline(text: string, dot: Value): Value {
    let value: Value;
    let first = true;
    for (const command of splitTop(text, /\|/)) {
      const words = splitTop(command, /\s/);
      const head = words[0]!;
      const isFunction = /^[a-zA-Z]\w*$/.test(head);
      if (!isFunction) {
        if (!first || words.length > 1) throw new Error(`helm-lite: cannot call ${command}`);
        value = this.#term(head, dot);
      } else {
        const args = words.slice(1).map((word) => this.#term(word, dot));
        value = this.#call(head, first ? args : [...args, value], dot);
      }
      first = false;
    }
    return value;
  }

  #term(word: string, dot: Value): Value {
    if (word.startsWith('"')) return JSON.parse(word) as string;
    if (/^-?\d+$/.test(word)) return Number(word);
    if (word.startsWith('(') && word.endsWith(')')) return this.#pipeline(word.slice(1, -1), dot);
    if (word === '.') return dot;
    if (word.startsWith('.')) {
      let value: Value = dot;
      for (const key of word.slice(1).split('.'))
        value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
      return value;
    }
    throw new Error(`helm-lite: unsupported term ${word}`);
  }

  #call(name: string, args: Value[], dot: Value): Value {
    const text = (value: Value): string => (value === undefined || value === null ? '' : String(value));
    switch (name) {
      case 'include': {
        const body = this.#defines.get(args[0] as string);
        if (body === undefined) throw new Error(`helm-lite: no template ${String(args[0])}`);
        return this.#renderNodes(body, args[1]);
      }
      case 'quote':
        return JSON.stringify(text(args[0]));
      case 'printf': {
        const rest = args.slice(1);
        return (args[0] as string).replace(/%[svd]/g, () => text(rest.shift()));
      }
      case 'join':
        return (args[1] as unknown[]).map(text).join(args[0] as string);
      case 'toYaml':
        return stringify(args[0]).replace(/\n$/, '');
      case 'indent':
      case 'nindent': {
        const pad = ' '.repeat(args[0] as number);
        const indented = text(args[1])
          .split('\n')
          .map((line) => pad + line)
          .join('\n');
        return name === 'nindent' ? `\n${indented}` : indented;
      }
      case 'default':
        return truthy(args[1]) ? args[1] : args[0];
      case 'trunc':
        return text(args[1]).slice(0, args[0] as number);
      case 'trimSuffix':
        return text(args[1]).endsWith(args[0] as string)
          ? text(args[1]).slice(0, -(args[0] as string).length)
          : text(args[1]);
      case 'contains':
        return text(args[1]).includes(args[0] as string);
      default:
        void dot;
        throw new Error(`helm-lite: unsupported function ${name}`);
    }
  }
}
