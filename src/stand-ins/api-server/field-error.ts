// Field errors, printed as apimachinery's util/validation/field.Error.ErrorBody() prints them.
//
// ErrorBody (staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go) prints the bad
// value by its Go type: int32/int64/bool/float plainly (`0`), strings with %q (`"Bad_Name"`),
// and anything else with %#v, which is why an unsigned resourceVersion 0 reads `0x0`. The value
// here carries that Go type explicitly, since JavaScript has one number type.

export type FieldErrorType = 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueTooLong';

/** A bad value with the Go type it had on the server. */
export type GoValue =
  | { readonly go: 'int'; readonly value: number }
  | { readonly go: 'uint64'; readonly value: number }
  | { readonly go: 'string'; readonly value: string }
  | { readonly go: 'bool'; readonly value: boolean }
  | { readonly go: 'null' }
  /** A struct or map, already printed as Go's %#v prints it. */
  | { readonly go: 'raw'; readonly text: string };

export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly value?: GoValue;
  readonly detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
};

function printValue(v: GoValue): string {
  switch (v.go) {
    case 'int': return String(v.value);
    case 'uint64': return `0x${v.value.toString(16)}`;
    case 'string': return JSON.stringify(v.value);
    case 'bool': return String(v.value);
    case 'null': return 'null';
    case 'raw': return v.text;
  }
}

/** field.Error.ErrorBody(): `Invalid value: 0: must be greater than 0`. */
export function errorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if ((e.type === 'FieldValueInvalid' || e.type === 'FieldValueNotSupported') && e.value !== undefined) s += `: ${printValue(e.value)}`;
  if (e.detail !== '') s += `: ${e.detail}`;
  return s;
}

export function fieldInvalid(field: string, value: GoValue, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail };
}

/** field.NotSupported: `Unsupported value: "Never": supported values: "Always"`. */
export function fieldNotSupported(field: string, value: GoValue, supported: readonly string[]): FieldError {
  return { type: 'FieldValueNotSupported', field, value, detail: `supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}` };
}

export function fieldRequired(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}

export function fieldForbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

// apimachinery/pkg/util/validation/validation.go IsDNS1123Subdomain.
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const DNS1123_SUBDOMAIN_MAX = 253;

/** IsDNS1123Subdomain's messages, in its order. */
export function dnsSubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must ' +
        `start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`,
    );
  }
  return errs;
}

/**
 * ValidateObjectMeta's name rules for a DNS-subdomain-named kind: one error per failed rule. A
 * generateName is checked as a prefix, as the real server checks it: one trailing '-' is allowed
 * (it is masked before the subdomain rule), a trailing '.' is not.
 */
export function validateName(name: string | undefined, generateName: string | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (generateName !== undefined && generateName !== '') {
    const masked = generateName.endsWith('-') ? `${generateName.slice(0, -1)}a` : generateName;
    errors.push(...dnsSubdomainErrors(masked).map((msg) => fieldInvalid('metadata.generateName', { go: 'string', value: generateName }, msg)));
  }
  if (name === undefined || name === '') {
    if (generateName === undefined || generateName === '') return [fieldRequired('metadata.name', 'name or generateName is required')];
    return errors;
  }
  return [...errors, ...dnsSubdomainErrors(name).map((msg) => fieldInvalid('metadata.name', { go: 'string', value: name }, msg))];
}
