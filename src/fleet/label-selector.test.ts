import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesSelector, parseLabelSelector, SelectorError } from './label-selector.ts';

const LINUX = { 'kubernetes.io/os': 'linux', pool: 'a' };
const WINDOWS = { 'kubernetes.io/os': 'windows' };

const ROWS: ReadonlyArray<{ selector: string; linux: boolean; windows: boolean }> = [
  { selector: '', linux: true, windows: true },
  { selector: 'kubernetes.io/os=linux', linux: true, windows: false },
  { selector: 'kubernetes.io/os==linux', linux: true, windows: false },
  { selector: 'kubernetes.io/os!=linux', linux: false, windows: true },
  { selector: 'kubernetes.io/os in (linux, plan9)', linux: true, windows: false },
  { selector: 'kubernetes.io/os notin (linux)', linux: false, windows: true },
  { selector: 'pool', linux: true, windows: false },
  { selector: '!pool', linux: false, windows: true },
  { selector: 'kubernetes.io/os=linux,pool=a', linux: true, windows: false },
  { selector: 'kubernetes.io/os=linux, pool=b', linux: false, windows: false },
];

for (const row of ROWS) {
  test(`label selector ${JSON.stringify(row.selector)} matches linux=${row.linux} windows=${row.windows}`, () => {
    const s = parseLabelSelector(row.selector);
    assert.equal(matchesSelector(s, LINUX), row.linux);
    assert.equal(matchesSelector(s, WINDOWS), row.windows);
  });
}

for (const bad of ['a=b=c', 'os in ()', '=x', 'a b']) {
  test(`label selector ${JSON.stringify(bad)} is refused with code invalid_selector`, () => {
    assert.throws(() => parseLabelSelector(bad), (err: unknown) => err instanceof SelectorError && err.code === 'invalid_selector' && err.message.startsWith('nodeSelector: '));
  });
}
