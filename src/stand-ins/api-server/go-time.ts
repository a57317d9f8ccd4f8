// Go's time.Parse for the two layouts the API decodes, with Go's own error messages.
//
// metav1.MicroTime.UnmarshalJSON parses with RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00"
// (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/micro_time.go), so a renewTime needs exactly
// six fractional digits; anything else fails with a *time.ParseError, which the decoder passes
// up unchanged. metav1.Time parses with time.RFC3339, where a fraction is optional.
// Both marshal back in UTC (MicroTime keeps 6 digits, Time drops the fraction), and so does this.
//
// The walk mirrors src/time/format.go Parse chunk by chunk, so the messages match:
//   parsing time "2026-01-02T03:04:05.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"
//   parsing time "2026-13-02T03:04:05.000000Z": month out of range

export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';
export const RFC3339 = '2006-01-02T15:04:05Z07:00';

export type GoTimeResult =
  | { readonly ok: true; readonly micros: number; readonly text: string }
  | { readonly ok: false; readonly message: string };

type Chunk =
  | { kind: 'lit'; text: string }
  | { kind: 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'tz' }
  | { kind: 'frac0'; digits: number }
  | { kind: 'frac9' };

const LAYOUT_TEXT: Record<string, string> = {
  year: '2006', month: '01', day: '02', hour: '15', minute: '04', second: '05', tz: 'Z07:00', frac9: '.999999999',
};

function chunks(layout: string): Chunk[] {
  if (layout === RFC3339_MICRO) {
    return [
      { kind: 'year' }, { kind: 'lit', text: '-' }, { kind: 'month' }, { kind: 'lit', text: '-' }, { kind: 'day' },
      { kind: 'lit', text: 'T' }, { kind: 'hour' }, { kind: 'lit', text: ':' }, { kind: 'minute' },
      { kind: 'lit', text: ':' }, { kind: 'second' }, { kind: 'frac0', digits: 6 }, { kind: 'tz' },
    ];
  }
  return [
    { kind: 'year' }, { kind: 'lit', text: '-' }, { kind: 'month' }, { kind: 'lit', text: '-' }, { kind: 'day' },
    { kind: 'lit', text: 'T' }, { kind: 'hour' }, { kind: 'lit', text: ':' }, { kind: 'minute' },
    { kind: 'lit', text: ':' }, { kind: 'second' }, { kind: 'tz' },
  ];
}

function goQuote(s: string): string {
  return JSON.stringify(s);
}

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's getnum: one or two digits, exactly two when fixed. */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) {
    if (fixed) return undefined;
    return [Number(s[0]), s.slice(1)];
  }
  return [Number(s.slice(0, 2)), s.slice(2)];
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** time.Parse(layout, value) for RFC3339 and RFC3339Micro. */
export function goParseTime(layout: typeof RFC3339_MICRO | typeof RFC3339, input: string): GoTimeResult {
  const cannot = (valueElem: string, layoutElem: string): GoTimeResult => ({
    ok: false,
    message: `parsing time ${goQuote(input)} as ${goQuote(layout)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`,
  });
  const range = (what: string): GoTimeResult => ({ ok: false, message: `parsing time ${goQuote(input)}: ${what} out of range` });
  let value = input;
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, nanos = 0, offsetMin = 0;
  const list = chunks(layout);
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === undefined) break;
    if (c.kind === 'lit') {
      // Go folds a literal into the prefix of the next std chunk and reports that prefix.
      if (!value.startsWith(c.text)) return cannot(value, c.text);
      value = value.slice(c.text.length);
      continue;
    }
    const hold = value;
    const layoutElem = c.kind === 'frac0' ? `.${'0'.repeat(c.digits)}` : LAYOUT_TEXT[c.kind] ?? '';
    switch (c.kind) {
      case 'year': {
        if (value.length < 4 || !isDigit(value, 0) || !/^\d{4}/.test(value)) return cannot(hold, layoutElem);
        year = Number(value.slice(0, 4));
        value = value.slice(4);
        break;
      }
      case 'month': case 'day': case 'minute': case 'second': case 'hour': {
        const got = getnum(value, c.kind !== 'hour');
        if (got === undefined) return cannot(hold, layoutElem);
        const [n, rest] = got;
        value = rest;
        if (c.kind === 'month') { if (n <= 0 || n > 12) return range('month'); month = n; }
        if (c.kind === 'day') day = n;
        if (c.kind === 'hour') { if (n >= 24) return range('hour'); hour = n; }
        if (c.kind === 'minute') { if (n >= 60) return range('minute'); minute = n; }
        if (c.kind === 'second') {
          if (n >= 60) return range('second');
          second = n;
          // RFC3339 has no fraction in its layout, but Go accepts one after the seconds.
          if (layout === RFC3339 && value.length >= 2 && (value[0] === '.' || value[0] === ',') && isDigit(value, 1)) {
            let j = 1;
            while (isDigit(value, j)) j++;
            nanos = Math.round(Number(`0.${value.slice(1, j)}`) * 1e9);
            value = value.slice(j);
          }
        }
        break;
      }
      case 'frac0': {
        const ndigit = 1 + c.digits;
        if (value.length < ndigit || (value[0] !== '.' && value[0] !== ',')) return cannot(hold, layoutElem);
        const digits = value.slice(1, ndigit);
        if (!/^\d+$/.test(digits)) return cannot(hold, layoutElem);
        nanos = Number(digits) * 10 ** (9 - c.digits);
        value = value.slice(ndigit);
        break;
      }
      case 'frac9':
        break;
      case 'tz': {
        if (value.length >= 1 && value[0] === 'Z') { value = value.slice(1); break; }
        if (value.length < 6 || value[3] !== ':') return cannot(hold, layoutElem);
        const sign = value[0];
        const hh = getnum(value.slice(1, 3), true);
        const mm = getnum(value.slice(4, 6), true);
        if (hh === undefined || mm === undefined || (sign !== '+' && sign !== '-')) return cannot(hold, layoutElem);
        if (hh[0] > 24) return range('time zone offset hour');
        if (mm[0] > 60) return range('time zone offset minute');
        offsetMin = (hh[0] * 60 + mm[0]) * (sign === '-' ? -1 : 1);
        value = value.slice(6);
        break;
      }
    }
  }
  if (value.length > 0) return { ok: false, message: `parsing time ${goQuote(input)}: extra text: ${goQuote(value)}` };
  if (day < 1 || day > daysIn(month, year)) return { ok: false, message: `parsing time ${goQuote(input)}: day out of range` };
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMin * 60_000;
  const micros = ms * 1000 + Math.floor(nanos / 1000);
  return { ok: true, micros, text: formatTime(layout, micros) };
}

/** Formats micros since the epoch in UTC, as MicroTime / Time MarshalJSON does. */
export function formatTime(layout: typeof RFC3339_MICRO | typeof RFC3339, micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString(); // 2026-01-02T03:04:05.123Z
  const base = iso.slice(0, 19);
  if (layout === RFC3339) return `${base}Z`;
  const frac = String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${base}.${frac}Z`;
}
