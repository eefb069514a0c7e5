import {
  compileEnvPattern,
  DEFAULT_EXCLUDE_PATTERNS,
  isDefaultExcludeException,
  matchesAny,
} from '@execd/pty-utils';

/**
 * Shortest variable value that is masked: shorter values (`1`, `true`, `dev`) would turn ordinary
 * words of the output into masks, and a secret this short is not one a pattern could protect.
 */
export const MIN_SECRET_VALUE_LENGTH = 8;

/**
 * Well-known credential formats, each with the kind its mask names. Anchored on the prefixes the
 * issuers document, long enough that ordinary words and hashes do not match. Order matters where
 * prefixes overlap (`sk-ant-` before `sk-`).
 */
const CREDENTIAL_PATTERNS: readonly { readonly kind: string; readonly source: string }[] = [
  {
    kind: 'private-key',
    source:
      '-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\\s\\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----',
  },
  { kind: 'aws-access-key-id', source: '\\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\\b' },
  { kind: 'github-token', source: '\\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\\b' },
  { kind: 'gitlab-token', source: '\\bglpat-[A-Za-z0-9_-]{20,}' },
  { kind: 'anthropic-api-key', source: '\\bsk-ant-[A-Za-z0-9_-]{20,}' },
  { kind: 'openai-api-key', source: '\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}' },
  { kind: 'slack-token', source: '\\bxox[abposre]-[A-Za-z0-9-]{10,}' },
  { kind: 'jwt', source: '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}' },
];

/** Options of {@link SecretMasker}. */
export interface SecretMaskerOptions {
  /**
   * The executor's environment: values of the variables the child-environment policy withholds
   * (names matching `patterns`, default `*KEY*`, `*SECRET*`, `*TOKEN*`, …) are masked as
   * `[redacted env:NAME]`. Default `process.env`.
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Name patterns of secret variables (default: the child-env policy's default excludes). */
  readonly patterns?: readonly string[] | undefined;
  /** Further literal secrets, masked as `[redacted <kind>]`. */
  readonly secrets?: readonly { readonly value: string; readonly kind: string }[] | undefined;
  /** Mask the well-known credential formats (default true). */
  readonly credentialFormats?: boolean | undefined;
}

/** The outcome of {@link SecretMasker.mask}. */
export interface MaskResult {
  /** The masked text (the input itself when nothing matched). */
  readonly text: string;
  /** How many secrets were replaced. */
  readonly masked: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces secrets in output text before it reaches a model: the values of secret environment
 * variables the executor knows (those its env policy withholds from children) and well-known
 * credential formats (AWS access key ids, GitHub/GitLab tokens, OpenAI/Anthropic/Slack keys,
 * JWTs, PEM private key blocks). Each becomes `[redacted <kind>]`; text around it is untouched.
 * Works on whole decoded text, so a match never splits a character; callers mask the assembled
 * output of a call, so a secret that arrived in two chunks is still one match.
 */
export class SecretMasker {
  readonly #pattern: RegExp | undefined;
  readonly #kinds: readonly string[];

  constructor(options: SecretMaskerOptions = {}) {
    const sources: string[] = [];
    const kinds: string[] = [];
    // Literal values first, longest first: a value containing another is replaced whole.
    const literals = new Map<string, string>();
    const env = options.env ?? process.env;
    const patterns = (options.patterns ?? DEFAULT_EXCLUDE_PATTERNS).map(compileEnvPattern);
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || value.length < MIN_SECRET_VALUE_LENGTH) continue;
      if (isDefaultExcludeException(name) || !matchesAny(patterns, name)) continue;
      if (!literals.has(value)) literals.set(value, `env:${name}`);
    }
    for (const secret of options.secrets ?? []) {
      if (secret.value.length > 0 && !literals.has(secret.value)) literals.set(secret.value, secret.kind);
    }
    for (const [value, kind] of [...literals].sort((a, b) => b[0].length - a[0].length)) {
      sources.push(escapeRegExp(value));
      kinds.push(kind);
    }
    if (options.credentialFormats ?? true) {
      for (const credential of CREDENTIAL_PATTERNS) {
        // Inner groups must not shift the alternation's group numbers.
        sources.push(credential.source.replaceAll('( BLOCK)', '(?: BLOCK)'));
        kinds.push(credential.kind);
      }
    }
    this.#kinds = kinds;
    this.#pattern =
      sources.length === 0 ? undefined : new RegExp(sources.map((s) => `(${s})`).join('|'), 'g');
  }

  /** Masks `text`; returns it unchanged (same string) when nothing matched. */
  mask(text: string): MaskResult {
    const pattern = this.#pattern;
    if (pattern === undefined || text.length === 0) return { text, masked: 0 };
    let masked = 0;
    const result = text.replace(pattern, (...match: unknown[]) => {
      // match = [whole, group1, …, groupN, offset, input]: the first defined group names the kind.
      const groups = match.slice(1, this.#kinds.length + 1);
      const index = groups.findIndex((group) => group !== undefined);
      masked += 1;
      return `[redacted ${this.#kinds[index] ?? 'secret'}]`;
    });
    return masked === 0 ? { text, masked: 0 } : { text: result, masked };
  }
}
