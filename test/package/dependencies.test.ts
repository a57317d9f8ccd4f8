// The production dependency list is pinned: every package that ships to every node costs
// memory, start-up time and audit surface, so adding one must be a deliberate, documented act.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const ROOT = new URL('../../', import.meta.url);
const PINNED = ['@grpc/grpc-js', '@grpc/proto-loader', '@kubernetes/client-node', 'pino', 'prom-client', 'yaml', 'zod'];

test('the production dependencies are exactly the pinned list', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { dependencies: Record<string, string> };
  assert.deepEqual(Object.keys(pkg.dependencies).sort(), [...PINNED].sort());
});

test('the README justifies every production dependency', () => {
  const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
  for (const name of PINNED) assert.match(readme, new RegExp(`\\| \`${name.replace('/', '\\/')}\` \\|`), `README row for ${name}`);
});
