import type * as v from 'valibot';

/** Dotted path of an issue (`shellSnapshot.shell.path`, `chunks.3.seq`), or '' at the root. */
function issuePath(issue: v.BaseIssue<unknown>): string {
  return issue.path?.map((item) => String(item.key)).join('.') ?? '';
}

/**
 * Turns valibot issues into one line that names each bad field. A missing required field reads
 * as the original's serde text (``missing field `env` ``); other issues are `path: message`.
 */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const path = issuePath(issue);
      if (path && issue.kind === 'schema' && issue.type === 'object' && issue.received === 'undefined') {
        return `missing field \`${path}\``;
      }
      return path ? `\`${path}\`: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/**
 * The original's (serde's) text when the first issue is a missing required field:
 * ``missing field `leaf` `` (the field's own name, only the first one). Undefined otherwise.
 */
export function serdeMissingField(issues: readonly v.BaseIssue<unknown>[]): string | undefined {
  const first = issues[0];
  if (first === undefined || first.kind !== 'schema' || first.type !== 'object') return undefined;
  if (first.received !== 'undefined') return undefined;
  const key = first.path?.at(-1)?.key;
  return key === undefined ? undefined : `missing field \`${String(key)}\``;
}
