import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesLabels, parseLabelSelector, SelectorError } from './selectors.ts';

describe('label selectors match as apimachinery labels.Parse does', () => {
  const labels = { 'kubernetes.io/os': 'linux', tier: 'a' };
  const table: [string, boolean][] = [
    ['', true],
    ['kubernetes.io/os=linux', true],
    ['kubernetes.io/os==windows', false],
    ['tier!=b', true],
    ['missing!=x', true],
    ['tier in (a,b)', true],
    ['tier notin (a)', false],
    ['missing notin (a)', true],
    ['tier', true],
    ['!tier', false],
    ['!missing,kubernetes.io/os=linux', true],
  ];
  for (const [selector, want] of table) {
    it(`${JSON.stringify(selector)} → ${String(want)}`, () => {
      assert.equal(matchesLabels(parseLabelSelector(selector), labels), want);
    });
  }

  it('a malformed selector is a SelectorError', () => {
    assert.throws(() => parseLabelSelector('a=b=c'), SelectorError);
  });
});
