// Durations are strings everywhere a person writes them (flags, env, config files), in Go's
// time.Duration syntax: "500ms", "10s", "3m", "1h30m", "1.5s". Internally they are milliseconds.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;

/** Parses a Go-style duration into milliseconds, or returns undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  if (text.length === 0) return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = PART.exec(text)) !== null) {
    const [whole, value, unit] = match;
    total += Number(value) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
    consumed += whole.length;
  }
  if (consumed !== text.length || !Number.isFinite(total)) return undefined;
  return total;
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
