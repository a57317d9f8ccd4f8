// Label and field selectors, parsed as apimachinery's labels.Parse and fields.ParseSelector parse
// them, and matched against one object. Pure.
//
// Label syntax: requirements joined by commas, each one of `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a,b)`, `k` (exists), `!k` (does not exist). `!=` and `notin` also match objects
// without the key, as upstream. Field syntax: `f=v`, `f==v`, `f!=v` joined by commas.
// A parse failure throws SelectorError, which the server answers with 400 BadRequest.

export class SelectorError extends Error {
  readonly code = 'bad_selector';

  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

export type LabelRequirement =
  | { readonly op: 'eq' | 'neq'; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists' | 'notexists'; readonly key: string };

/** Splits on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): string {
  if (!KEY.test(key)) throw new SelectorError(`unable to parse requirement: invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new SelectorError(`unable to parse requirement: invalid label value: "${value}"`);
  return value;
}

export function parseLabelSelector(selector: string): LabelRequirement[] {
  return splitTop(selector).map((part): LabelRequirement => {
    const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
    if (set !== null) {
      const values = (set[3] ?? '').split(',').map((v) => checkValue(v.trim()));
      return { op: set[2] === 'in' ? 'in' : 'notin', key: checkKey(set[1] ?? ''), values };
    }
    const neq = /^([^!=\s]+)\s*!=\s*(.*)$/.exec(part);
    if (neq !== null) return { op: 'neq', key: checkKey(neq[1] ?? ''), value: checkValue((neq[2] ?? '').trim()) };
    const eq = /^([^!=\s]+)\s*==?\s*(.*)$/.exec(part);
    if (eq !== null) return { op: 'eq', key: checkKey(eq[1] ?? ''), value: checkValue((eq[2] ?? '').trim()) };
    if (part.startsWith('!')) return { op: 'notexists', key: checkKey(part.slice(1).trim()) };
    return { op: 'exists', key: checkKey(part) };
  });
}

export function matchesLabels(reqs: readonly LabelRequirement[], labels: Readonly<Record<string, string>>): boolean {
  for (const r of reqs) {
    const has = Object.hasOwn(labels, r.key);
    const v = labels[r.key];
    switch (r.op) {
      case 'eq': if (!has || v !== r.value) return false; break;
      case 'neq': if (has && v === r.value) return false; break;
      case 'in': if (!has || !r.values.includes(v ?? '')) return false; break;
      case 'notin': if (has && r.values.includes(v ?? '')) return false; break;
      case 'exists': if (!has) return false; break;
      case 'notexists': if (has) return false; break;
    }
  }
  return true;
}

export interface FieldRequirement {
  readonly field: string;
  readonly op: 'eq' | 'neq';
  readonly value: string;
}

export function parseFieldSelector(selector: string): FieldRequirement[] {
  return splitTop(selector).map((part) => {
    const neq = /^([^!=]+)!=(.*)$/.exec(part);
    if (neq !== null) return { field: (neq[1] ?? '').trim(), op: 'neq' as const, value: (neq[2] ?? '').trim() };
    const eq = /^([^!=]+)==?(.*)$/.exec(part);
    if (eq !== null) return { field: (eq[1] ?? '').trim(), op: 'eq' as const, value: (eq[2] ?? '').trim() };
    throw new SelectorError(`invalid selector: '${selector}'; can't understand '${part}'`);
  });
}

export function matchesFields(reqs: readonly FieldRequirement[], valueOf: (field: string) => string): boolean {
  for (const r of reqs) {
    const v = valueOf(r.field);
    if (r.op === 'eq' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
