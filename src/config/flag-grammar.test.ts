import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFlags, wantsHelp, type FlagSpec } from './flag-grammar.ts';

const SPECS: readonly FlagSpec[] = [
  { key: 'output', flag: '--output', short: 'o', boolean: false, env: [], defaultText: 'table', help: '' },
  { key: 'grace', flag: '--grace', boolean: false, env: [], defaultText: '50s', help: '' },
  { key: 'watch', flag: '--watch', boolean: true, env: [], defaultText: 'false', help: '' },
];

function read(argv: readonly string[]): { values: Record<string, [unknown, string]>; errors: readonly string[]; help: boolean } {
  const parsed = parseFlags(argv, SPECS, 'nodepulse test');
  const values = Object.fromEntries([...parsed.values].map(([k, v]) => [k, [v.value, v.source] as [unknown, string]]));
  return { values, errors: parsed.errors, help: parsed.help };
}

describe('the one flag grammar (kubectl\'s)', () => {
  const accepted: ReadonlyArray<{ argv: readonly string[]; values: Record<string, [unknown, string]> }> = [
    { argv: ['--grace=5s'], values: { grace: ['5s', '--grace'] } },
    { argv: ['--grace', '5s'], values: { grace: ['5s', '--grace'] } },
    { argv: ['--grace=-5s'], values: { grace: ['-5s', '--grace'] } },
    { argv: ['--grace='], values: { grace: ['', '--grace'] } },
    { argv: ['-o', 'json'], values: { output: ['json', '-o'] } },
    { argv: ['-o=json'], values: { output: ['json', '-o'] } },
    { argv: ['-ojson'], values: { output: ['json', '-o'] } },
    { argv: ['--output', 'json'], values: { output: ['json', '--output'] } },
    { argv: ['--watch'], values: { watch: ['true', '--watch'] } },
    { argv: ['--watch=false'], values: { watch: ['false', '--watch'] } },
    { argv: ['--grace', '1s', '--grace=2s'], values: { grace: ['2s', '--grace'] } },
    { argv: ['-o', '-'], values: { output: ['-', '-o'] } },
    { argv: ['--watch', '--'], values: { watch: ['true', '--watch'] } },
  ];
  for (const row of accepted) {
    it(`reads ${JSON.stringify(row.argv)}`, () => {
      assert.deepEqual(read(row.argv), { values: row.values, errors: [], help: false });
    });
  }

  const rejected: ReadonlyArray<{ argv: readonly string[]; errors: readonly string[]; values?: Record<string, [unknown, string]> }> = [
    { argv: ['--grace'], errors: ['flag: --grace must be followed by a value'] },
    { argv: ['--grace', '--watch'], errors: ['flag: --grace must be followed by a value'], values: { watch: ['true', '--watch'] } },
    { argv: ['-o'], errors: ['flag: -o must be followed by a value'] },
    { argv: ['--grase', '5s'], errors: ['flag: --grase must be a flag of nodepulse test (did you mean --grace?)'] },
    { argv: ['-grace', '5s'], errors: ['flag: -grace must be a flag of nodepulse test (did you mean --grace?)'] },
    { argv: ['-grace=5s'], errors: ['flag: -grace must be a flag of nodepulse test (did you mean --grace?)'] },
    { argv: ['--colour=blue'], errors: ['flag: --colour must be a flag of nodepulse test'] },
    { argv: ['-x'], errors: ['flag: -x must be a flag of nodepulse test'] },
    { argv: ['nodes'], errors: ['argument: nodes must be a flag (nodepulse test takes no positional arguments)'] },
    { argv: ['-'], errors: ['argument: - must be a flag (nodepulse test takes no positional arguments)'] },
    { argv: ['--', '--grace=1s'], errors: ['argument: --grace=1s must be a flag (nodepulse test takes no positional arguments)'] },
    { argv: ['--help=yes'], errors: ['flag: --help=yes must be given without a value'] },
    {
      argv: ['--bogus', '--grace', 'x', 'y'],
      errors: ['flag: --bogus must be a flag of nodepulse test', 'argument: y must be a flag (nodepulse test takes no positional arguments)'],
      values: { grace: ['x', '--grace'] },
    },
  ];
  for (const row of rejected) {
    it(`rejects ${JSON.stringify(row.argv)}: ${row.errors.join(' | ')}`, () => {
      assert.deepEqual(read(row.argv), { values: row.values ?? {}, errors: row.errors, help: false });
    });
  }

  it('-h and --help ask for help wherever they stand, but not after --', () => {
    assert.equal(read(['--grace', '5s', '-h']).help, true);
    assert.equal(read(['--help', '--bogus']).help, true);
    assert.equal(wantsHelp(['--', '--help']), false);
    assert.equal(wantsHelp(['--grace=--help']), false);
  });
});
