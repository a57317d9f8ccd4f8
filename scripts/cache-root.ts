// The cache of what the project's tooling builds outside any checkout (Kubernetes' binaries,
// the CRI fault proxy, the image's Debian bases): $NODEPULSE_CACHE_DIR, or ~/.cache/nodepulse.
// A fresh clone (a CI run) finds there what an earlier run built; every entry is keyed by its
// inputs, so a stale one is never taken for a current one.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The cache root: NODEPULSE_CACHE_DIR, or ~/.cache/nodepulse. */
export function cacheRoot(): string {
  const configured = process.env['NODEPULSE_CACHE_DIR'];
  return configured !== undefined && configured !== '' ? configured : join(homedir(), '.cache', 'nodepulse');
}
