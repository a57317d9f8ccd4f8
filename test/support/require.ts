// Real components a test needs. Outside CI a missing one skips the test and says why; under
// CI=true it fails the test, because .ci/run installs every one of them and a silent skip would
// hide a broken CI image.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';

/** The absolute path of an executable on PATH (or given as a path), or undefined. */
export function findExecutable(name: string): string | undefined {
  const dirs = name.includes('/') ? [''] : (process.env['PATH'] ?? '').split(delimiter).concat(['/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    const candidate = dir === '' ? name : join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
}

/**
 * Returns the paths of the named executables, or (outside CI) skips the test when one is
 * missing. Under CI=true a missing executable throws, failing the test.
 */
export function requireExecutables(t: TestContext, names: readonly string[]): Record<string, string> | undefined {
  const found: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const path = findExecutable(name);
    if (path === undefined) missing.push(name);
    else found[name] = path;
  }
  if (missing.length === 0) return found;
  const why = `needs ${missing.join(', ')} on PATH (.ci/run lists the Debian packages to apt-get install)`;
  if (process.env['CI'] === 'true') throw new Error(`precondition: this test ${why}, and CI must have it`);
  t.skip(why);
  return undefined;
}

/** True when the test runs as root; containerd and SIGSTOP tests need it. */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
