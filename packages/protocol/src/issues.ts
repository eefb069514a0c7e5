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
