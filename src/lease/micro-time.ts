// Kubernetes MicroTime: RFC 3339 in UTC with exactly six fractional digits
// (apimachinery's metav1.RFC3339Micro, "2006-01-02T15:04:05.000000Z07:00"). The real API
// server refuses a Lease whose renewTime has another shape, so this is the one formatter.
//
// Also here: the renewTime rule of DESIGN.md, max(wall now, last written + 1 µs), so a wall
// clock stepped backwards never moves a lease back, and two renewals are never the same bytes.

/** "2026-01-02T03:04:05.123456Z" from microseconds since the epoch. */
export function formatMicroTime(wallMicros: number): string {
  const micros = Math.floor(wallMicros);
  const ms = Math.floor(micros / 1000);
  const fraction = micros - ms * 1000; // 0..999, also for times before 1970
  const iso = new Date(ms).toISOString(); // "2026-01-02T03:04:05.123Z"
  return `${iso.slice(0, 23)}${String(fraction).padStart(3, '0')}Z`;
}

/** metav1.Time: RFC 3339, whole seconds ("2026-01-02T03:04:05Z"), as Node conditions carry it. */
export function formatTime(wallMicros: number): string {
  return `${new Date(Math.floor(wallMicros / 1_000_000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The renewTime to stamp now: never at or before the last one written. */
export function nextRenewMicros(wallNowMicros: number, lastWrittenMicros: number | undefined): number {
  const now = Math.floor(wallNowMicros);
  return lastWrittenMicros === undefined ? now : Math.max(now, lastWrittenMicros + 1);
}
