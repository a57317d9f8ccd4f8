// Kubernetes label selectors, parsed once and matched locally.
//
// The fleet readers judge only nodes that match `--node-selector` (default
// `kubernetes.io/os=linux`, the DaemonSet's own selector). Nodes are listed whole and filtered
// here rather than by the API server, so that a node left out can still be reported as
// "not judged (selector)" instead of silently vanishing.
//
// Grammar (apimachinery's labels.Parse): requirements separated by commas, each one of
//   key=value | key==value | key!=value | key | !key | key in (a,b) | key notin (a,b)
// Keys and values are not validated beyond being non-empty where required: the selector is the
// operator's, and a typo simply matches nothing, which the output then shows.
//
// Failure mode: a malformed selector is a SelectorError (code `invalid_selector`) whose message
// names the selector and the rule it broke.

export type Requirement =
  | { readonly op: 'eq' | 'ne'; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists' | 'absent'; readonly key: string };

export interface LabelSelector {
  readonly text: string;
  readonly requirements: readonly Requirement[];
}

export class SelectorError extends Error {
  readonly code = 'invalid_selector';
  /** What the selector must be: the tail of the `nodeSelector: value must be rule` line. */
  readonly rule: string;

  constructor(selector: string, rule: string) {
    super(`nodeSelector: ${JSON.stringify(selector)} must be ${rule}`);
    this.name = 'SelectorError';
    this.rule = rule;
  }
}

/** Parses a selector; the empty string matches everything. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements: Requirement[] = [];
  for (const part of splitTopLevel(text.trim())) {
    const p = part.trim();
    if (p.length === 0) continue;
    requirements.push(parseRequirement(p, text));
  }
  return { text: text.trim(), requirements };
}

/** Whether labels satisfy every requirement of the selector. */
export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.op) {
      case 'eq':
        return has && value === r.value;
      case 'ne':
        return !has || value !== r.value;
      case 'in':
        return has && value !== undefined && r.values.includes(value);
      case 'notin':
        return !has || value === undefined || !r.values.includes(value);
      case 'exists':
        return has;
      case 'absent':
        return !has;
    }
    return false;
  });
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const SET = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^()]*)\)$/;
const KEY = /^[^\s!=(),]+$/;

function parseRequirement(p: string, whole: string): Requirement {
  const set = SET.exec(p);
  if (set !== null) {
    const [, key = '', op, list = ''] = set;
    const values = list.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
    if (values.length === 0) throw new SelectorError(whole, `a label selector whose sets hold at least one value (${JSON.stringify(p)} holds none)`);
    return { op: op === 'in' ? 'in' : 'notin', key, values };
  }
  const ne = p.indexOf('!=');
  if (ne > 0) return binary('ne', p.slice(0, ne), p.slice(ne + 2), p, whole);
  const eq2 = p.indexOf('==');
  if (eq2 > 0) return binary('eq', p.slice(0, eq2), p.slice(eq2 + 2), p, whole);
  const eq = p.indexOf('=');
  if (eq > 0) return binary('eq', p.slice(0, eq), p.slice(eq + 1), p, whole);
  if (p.startsWith('!') && KEY.test(p.slice(1).trim())) return { op: 'absent', key: p.slice(1).trim() };
  if (KEY.test(p)) return { op: 'exists', key: p };
  throw new SelectorError(whole, `a label selector (key=value, key!=value, key in (a,b), key, !key); ${JSON.stringify(p)} is none of these`);
}

function binary(op: 'eq' | 'ne', rawKey: string, rawValue: string, p: string, whole: string): Requirement {
  const key = rawKey.trim();
  const value = rawValue.trim();
  if (!KEY.test(key) || /[\s!=(),]/.test(value)) {
    throw new SelectorError(whole, `a label selector; ${JSON.stringify(p)} is not a valid requirement`);
  }
  return { op, key, value };
}
