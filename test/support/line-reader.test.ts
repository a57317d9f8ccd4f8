import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { parseLogLine, readLines } from './line-reader.ts';

/** Writes the chunks into a stream read by readLines and gives back the lines, in order. */
async function linesOf(chunks: ReadonlyArray<string | Buffer>, maxLineChars?: number): Promise<string[]> {
  const stream = new PassThrough();
  const lines: string[] = [];
  readLines(stream, (line) => lines.push(line), maxLineChars === undefined ? {} : { maxLineChars });
  const ended = new Promise<void>((done) => stream.on('end', () => done()));
  for (const c of chunks) stream.write(c);
  stream.end();
  await ended;
  return lines;
}

test('lines split across chunks, several in one chunk, and an empty line, each given once without its newline', async () => {
  assert.deepEqual(await linesOf(['{"a":', '1}\nsec', 'ond\n\nthird\nfourth\n']), ['{"a":1}', 'second', '', 'third', 'fourth']);
});

test('the text after the last newline is given at the end of the stream', async () => {
  assert.deepEqual(await linesOf(['one\ntwo']), ['one', 'two']);
  assert.deepEqual(await linesOf(['one\n']), ['one']);
});

test('a character whose UTF-8 bytes arrive in two chunks is decoded whole', async () => {
  const bytes = Buffer.from('né\n', 'utf8');
  assert.deepEqual(await linesOf([bytes.subarray(0, 2), bytes.subarray(2)]), ['né']);
});

test('a line longer than maxLineChars is given cut, its rest dropped, and the next line is whole', async () => {
  assert.deepEqual(await linesOf(['abc', 'defgh', 'ijk\nshort\n'], 4), ['abcd', 'shor']);
  assert.deepEqual(await linesOf(['abcdefgh\nok\n'], 4), ['abcd', 'ok']);
  assert.deepEqual(await linesOf(['abcdefgh'], 4), ['abcd']);
});

test('no stream (a child spawned without a pipe) gives no lines and does not throw', () => {
  readLines(undefined, () => assert.fail('no line expected'));
  readLines(null, () => assert.fail('no line expected'));
});

test('a log line is its JSON object, and anything else (text, a JSON number or array) is kept raw', () => {
  assert.deepEqual(parseLogLine('{"msg":"Agent started","level":30}'), { msg: 'Agent started', level: 30 });
  assert.deepEqual(parseLogLine('panic: oops'), { raw: 'panic: oops' });
  assert.deepEqual(parseLogLine('42'), { raw: '42' });
  assert.deepEqual(parseLogLine('[1]'), { raw: '[1]' });
});
