import type * as v from 'valibot';

/**
 * Valibot issues → `path: message`, e.g. `models[3].pricing.input_per_mtok: expected number`.
 * Used for request bodies (422s) and the config file alike so both name the field the same way.
 */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string') out += out ? `.${key}` : key;
  }
  return out;
}

export function issueMessage(issue: v.BaseIssue<unknown>): string {
  // valibot's default text is "Invalid type: Expected number but received "x""; keep the useful part.
  if (issue.kind === 'schema' && issue.expected) {
    return issue.received === 'undefined' ? 'is required' : `expected ${issue.expected}, received ${issue.received}`;
  }
  return issue.message;
}

export function formatIssue(issue: v.BaseIssue<unknown>): string {
  const path = issuePath(issue);
  return path ? `${path}: ${issueMessage(issue)}` : issueMessage(issue);
}

export function formatIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.map(formatIssue).join('; ');
}
