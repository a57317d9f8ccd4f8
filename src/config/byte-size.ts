// Byte sizes as people write them for Kubernetes: a plain integer (16777216) or a quantity with a
// binary suffix (16Mi, 512Ki, 1Gi) or a decimal one (16M, 500k, 1G), as resource.Quantity reads
// them. Only whole numbers of bytes are sizes: 1.5Ki is 1536 and fine, 0.5 is not.
//
// Failure modes: anything else (a negative number, an exponent, an unknown suffix, a fraction of
// a byte, a value past Number.MAX_SAFE_INTEGER) is `undefined`, never a guess.

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

const QUANTITY = /^(\d+(?:\.\d+)?)(k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/** Parses a byte size (integer or quantity) into bytes, or returns undefined. */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isSafeInteger(text) && text >= 0 ? text : undefined;
  const match = QUANTITY.exec(text);
  if (match === null) return undefined;
  const bytes = Number(match[1]) * (SUFFIX[match[2] ?? ''] ?? Number.NaN);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Formats bytes with the largest binary suffix that divides them exactly: 16Mi, 1536, 1Ki. */
export function formatByteSize(bytes: number): string {
  for (const suffix of ['Ti', 'Gi', 'Mi', 'Ki'] as const) {
    const unit = SUFFIX[suffix] ?? 1;
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}
