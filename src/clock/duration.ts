// Durations are strings everywhere a person writes them (flags, env, config files), in Go's
// time.Duration syntax: "500ms", "10s", "3m", "1h30m", "1.5s". Internally they are milliseconds.
//
// parseGoDurationNs reads exactly what Go's time.ParseDuration reads, with the same result in
// nanoseconds (duration.test.ts holds it to a table of Go's own answers):
// `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, units ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h; a bare
// "0" (signed or not) is zero; anything else without a unit, an unknown unit, an empty number
// (".s") or a value past the int64 nanoseconds Go holds is refused. Go turns a fraction into
// nanoseconds through a float64; here it is done exactly, and the two agree to the nanosecond on
// every value in the table.
//
// parseDuration is what nodepulse accepts: the same, in milliseconds, except that a leading minus
// is refused even where Go reads it (`-5s`, and `-0s`, which Go reads as 0). Every duration
// nodepulse takes is a length of time (a period, a deadline, a window, a grace), so a minus sign
// is a mistake, and saying so beats reading it as zero or as its absolute value.

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n, // µ, MICRO SIGN
  '\u03bcs': 1_000n, // μ, GREEK SMALL LETTER MU
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go keeps a Duration in an int64 of nanoseconds. */
const INT64_OVERFLOW = 1n << 63n;

/** Go's time.ParseDuration: nanoseconds (negative when signed so), or undefined where Go errs. */
export function parseGoDurationNs(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const part = /^(\d*)(?:\.(\d*))?([^.0-9]*)/.exec(rest);
    const [whole = '', int = '', frac, unit = ''] = part ?? [];
    if (int === '' && (frac ?? '') === '') return undefined; // no digits: "", ".s", "x"
    if (unit === '') return undefined; // a number without a unit
    const scale = UNIT_NS[unit];
    if (scale === undefined) return undefined;
    let value = int === '' ? 0n : BigInt(int);
    if (value > INT64_OVERFLOW / scale) return undefined;
    value *= scale;
    if (frac !== undefined && frac !== '') value += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    total += value;
    if (total > INT64_OVERFLOW) return undefined;
    rest = rest.slice(whole.length);
  }
  if (negative) return -total;
  return total < INT64_OVERFLOW ? total : undefined;
}

/** A duration as nodepulse accepts it, in milliseconds, or undefined (see the module header). */
export function parseDuration(text: string): number | undefined {
  if (text.startsWith('-')) return undefined;
  const ns = parseGoDurationNs(text);
  return ns === undefined ? undefined : Number(ns) / 1e6;
}

/** Formats milliseconds as Go prints a time.Duration: 3m5s, 1.5s, 250ms, 1h0m0s. */
export function formatDuration(ms: number): string {
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0) return '0s';
  if (ms < 1000) return `${trim(ms)}ms`;
  const totalSeconds = ms / 1000;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds - h * 3600) / 60);
  const s = totalSeconds - h * 3600 - m * 60;
  let out = '';
  if (h > 0) out += `${h}h`;
  if (h > 0 || m > 0) out += `${m}m`;
  out += `${trim(s)}s`;
  return out;
}

function trim(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(3)));
}
