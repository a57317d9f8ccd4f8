// meta/v1 Time and MicroTime as text, the product's one formatter and parser of both.
//
// | type            | written as                       | carried by                                  |
// |-----------------|----------------------------------|---------------------------------------------|
// | metav1.MicroTime| 2026-01-02T03:04:05.123456Z      | Lease renewTime / acquireTime, Event        |
// |                 | (RFC3339Micro: six digits, UTC)  | eventTime                                   |
// | metav1.Time     | 2026-01-02T03:04:05Z             | Node condition times, taint timeAdded,      |
// |                 | (RFC 3339, whole seconds, UTC)   | creationTimestamp                           |
//
// Why six digits exactly: MicroTime.UnmarshalJSON parses with RFC3339Micro, so the real API
// server refuses a renewTime with any other number of fractional digits: 400 BadRequest on a
// create, 422 Invalid (field `patch`) on a merge patch (test/cluster/conformance-table.ts).
// Time drops the fraction when it marshals; this writes it without one, as the server would
// store it.
//
// Reading is more lenient than writing, because what is read was written by someone else: either
// type, a fraction of 1 to 9 digits (cut to microseconds), `Z` or a numeric offset.
//
// Assumptions: times are microseconds since the Unix epoch, a fraction of a microsecond is
// floored. Failure mode: text that is neither type parses to undefined, never to a guess.
//
// The API stand-in keeps its own parser and formatter (apiserver/go-time.ts) on purpose: it
// witnesses what the product writes, and must not agree with it by sharing its code.

/** "2026-01-02T03:04:05.123456Z" from microseconds since the epoch. */
export function formatMicroTime(wallMicros: number): string {
  const micros = Math.floor(wallMicros);
  const ms = Math.floor(micros / 1000);
  const fraction = micros - ms * 1000; // 0..999, also for times before 1970
  const iso = new Date(ms).toISOString(); // "2026-01-02T03:04:05.123Z"
  return `${iso.slice(0, 23)}${String(fraction).padStart(3, '0')}Z`;
}

/** "2026-01-02T03:04:05Z" from microseconds since the epoch: whole seconds, floored. */
export function formatTime(wallMicros: number): string {
  return `${new Date(Math.floor(wallMicros / 1_000_000) * 1000).toISOString().slice(0, 19)}Z`;
}

const META_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Microseconds since the epoch from a MicroTime or a Time; undefined when the text is neither. */
export function parseMetaTime(text: string | undefined | null): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = META_TIME.exec(text);
  if (m === null) return undefined;
  const [, base = '', frac = '', zone = 'Z'] = m;
  const seconds = Date.parse(`${base}${zone}`);
  if (!Number.isFinite(seconds)) return undefined;
  return seconds * 1000 + Number(frac.padEnd(6, '0').slice(0, 6));
}
