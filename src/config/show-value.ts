// A value as an error line shows it: a plain token as it is, anything else quoted as JSON (an
// empty string, a space, a control character, a list or a mapping from a config file), and cut at
// 80 characters so that a pasted blob cannot flood the terminal.

const MAX_SHOWN_CHARS = 80;
const PLAIN = /^[\w.:/[\]@+%=-]+$/;

export function showValue(value: unknown): string {
  let out: string;
  if (value === undefined) out = '""';
  else if (typeof value === 'string') out = PLAIN.test(value) ? value : JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out = String(value);
  else out = JSON.stringify(value) ?? String(value);
  return out.length > MAX_SHOWN_CHARS ? `${out.slice(0, MAX_SHOWN_CHARS - 1)}…` : out;
}
