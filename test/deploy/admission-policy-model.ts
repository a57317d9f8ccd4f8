// How the API server admits a request under one ValidatingAdmissionPolicy, modelled from the
// documented rules (kubernetes.io, "Validating Admission Policy"), with the policy's CEL run by a
// real CEL evaluator (@marcbachmann/cel-js):
//
// | step                     | rule                                                                   |
// |--------------------------|------------------------------------------------------------------------|
// | matchConstraints         | the request's group, version, operation and resource (`nodes/status`   |
// |                          | names a subresource) must match a resourceRule; else the policy is not |
// |                          | in play                                                                |
// | matchConditions          | any one false: the policy is skipped; none false but one in error:     |
// |                          | failurePolicy decides (Fail denies, Ignore skips); all true: go on     |
// | variables                | evaluated lazily, when an expression first reads variables.<name>, at  |
// |                          | most once; an error in one is an error of the expression that read it  |
// | validations              | false: a failure with messageExpression's string (else message, else   |
// |                          | "failed expression: …") and reason (default Invalid); an error: a      |
// |                          | failure under failurePolicy Fail, nothing under Ignore                 |
// | the binding's Deny       | any failure denies the request                                         |
//
// The CEL inputs are `object`, `oldObject`, `request` (the AdmissionRequest without its objects),
// `params` and `namespaceObject` (null: the policy has no paramKind and the resources here are not
// namespaces) and `variables`. `authorizer` is not modelled: a test that uses this model asserts
// that the policy does not read it.
//
// Assumptions: a merge or strategic-merge PATCH reaches admission as an UPDATE whose object is the
// patched object (the API server applies the patch before admission). Test-only code.
import { evaluate } from '@marcbachmann/cel-js';

export interface ResourceRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly operations: readonly string[];
  readonly resources: readonly string[];
}

export interface NamedExpression {
  readonly name: string;
  readonly expression: string;
}

export interface Validation {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
}

export interface PolicySpec {
  readonly failurePolicy?: 'Fail' | 'Ignore';
  readonly matchConstraints: { readonly resourceRules: readonly ResourceRule[] };
  readonly matchConditions?: readonly NamedExpression[];
  readonly variables?: readonly NamedExpression[];
  readonly validations: readonly Validation[];
}

/** The parts of an admission.k8s.io/v1 AdmissionRequest the model reads, as the API server fills them. */
export interface AdmissionRequest {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subResource?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly userInfo: { readonly username: string; readonly groups?: readonly string[]; readonly extra?: Readonly<Record<string, readonly string[]>> };
}

export interface Attributes {
  readonly request: AdmissionRequest;
  readonly object: unknown;
  readonly oldObject?: unknown;
}

export type Failure = { readonly kind: 'invalid'; readonly message: string; readonly reason: string } | { readonly kind: 'error'; readonly message: string };

export type Verdict =
  | { readonly outcome: 'not-matched' }
  | { readonly outcome: 'skipped'; readonly why: string }
  | { readonly outcome: 'admitted' }
  | { readonly outcome: 'denied'; readonly failures: readonly Failure[] };

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

function matches(rules: readonly ResourceRule[], request: AdmissionRequest): boolean {
  const resource = request.subResource === undefined || request.subResource === '' ? request.resource.resource : `${request.resource.resource}/${request.subResource}`;
  const has = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);
  return rules.some(
    (r) => has(r.apiGroups, request.resource.group) && has(r.apiVersions, request.resource.version) && has(r.operations, request.operation) && has(r.resources, resource),
  );
}

export function admit(policy: PolicySpec, attributes: Attributes): Verdict {
  if (!matches(policy.matchConstraints.resourceRules, attributes.request)) return { outcome: 'not-matched' };
  const failurePolicy = policy.failurePolicy ?? 'Fail';
  const variables: Record<string, unknown> = {};
  const activation = {
    object: attributes.object ?? null,
    oldObject: attributes.oldObject ?? null,
    request: attributes.request,
    params: null,
    namespaceObject: null,
    variables,
  };
  const run = (expression: string): Result => {
    try {
      return { ok: true, value: evaluate(expression, activation) };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err) };
    }
  };
  for (const v of policy.variables ?? []) {
    let memo: Result | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get: () => {
        memo ??= run(v.expression);
        if (!memo.ok) throw new Error(`variable ${v.name}: ${memo.error}`);
        return memo.value;
      },
    });
  }

  const conditionErrors: string[] = [];
  for (const c of policy.matchConditions ?? []) {
    const r = run(c.expression);
    if (r.ok && r.value === false) return { outcome: 'skipped', why: `matchCondition ${c.name} is false` };
    if (!r.ok) conditionErrors.push(`matchCondition ${c.name}: ${r.error}`);
    else if (r.value !== true) conditionErrors.push(`matchCondition ${c.name}: not a bool`);
  }
  if (conditionErrors.length > 0) {
    return failurePolicy === 'Fail'
      ? { outcome: 'denied', failures: conditionErrors.map((message) => ({ kind: 'error', message })) }
      : { outcome: 'skipped', why: 'a matchCondition failed to evaluate, and failurePolicy is Ignore' };
  }

  const failures: Failure[] = [];
  for (const v of policy.validations) {
    const r = run(v.expression);
    if (r.ok && r.value === true) continue;
    if (r.ok && r.value === false) {
      const m = v.messageExpression === undefined ? undefined : run(v.messageExpression);
      const message = m?.ok === true && typeof m.value === 'string' && m.value !== '' ? m.value : (v.message ?? `failed expression: ${v.expression}`);
      failures.push({ kind: 'invalid', message, reason: v.reason ?? 'Invalid' });
      continue;
    }
    if (failurePolicy === 'Fail') failures.push({ kind: 'error', message: `expression '${v.expression}' resulted in error: ${r.ok ? 'not a bool' : r.error}` });
  }
  return failures.length > 0 ? { outcome: 'denied', failures } : { outcome: 'admitted' };
}
