// The version reported by `nodepulse version` and nodepulse_build_info, read once from the
// package's own package.json (two folders up from both src/ and dist/src/).
import { readFileSync } from 'node:fs';

function readVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'nodepulse' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this depth; try the next
    }
  }
  return '0.0.0-unknown';
}

export const VERSION: string = readVersion();
