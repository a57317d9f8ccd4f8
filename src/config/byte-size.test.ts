import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatByteSize, parseByteSize } from './byte-size.ts';

it('parses integers and Kubernetes quantities, and nothing else', () => {
  const table: ReadonlyArray<[string | number, number | undefined]> = [
    ['16777216', 16_777_216],
    [16_777_216, 16_777_216],
    ['16Mi', 16_777_216],
    ['512Ki', 524_288],
    ['1.5Ki', 1536],
    ['1Gi', 1_073_741_824],
    ['16M', 16_000_000],
    ['500k', 500_000],
    ['0', 0],
    ['16MB', undefined],
    ['16mi', undefined],
    ['-1', undefined],
    ['1e6', undefined],
    ['0.5', undefined],
    ['', undefined],
    [1.5, undefined],
    [-1, undefined],
  ];
  for (const [input, bytes] of table) assert.equal(parseByteSize(input), bytes, JSON.stringify(input));
});

it('formats with the largest binary suffix that divides exactly', () => {
  assert.equal(formatByteSize(16_777_216), '16Mi');
  assert.equal(formatByteSize(1536), '1536');
  assert.equal(formatByteSize(1024), '1Ki');
  assert.equal(formatByteSize(12_345_678), '12345678');
  assert.equal(formatByteSize(2 ** 31 - 1), '2147483647');
});
