// The license the package declares is the one it ships: package.json says Apache-2.0, and LICENSE
// holds the Apache License 2.0 in full, each of its nine sections, the end of its terms and the
// appendix, and no section cut short. The package's `files` list leaves LICENSE to npm, which
// packs it whatever `files` says.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const ROOT = new URL('../../', import.meta.url);
const SECTIONS = [
  'Definitions.',
  'Grant of Copyright License.',
  'Grant of Patent License.',
  'Redistribution.',
  'Submission of Contributions.',
  'Trademarks.',
  'Disclaimer of Warranty.',
  'Limitation of Liability.',
  'Accepting Warranty or Additional Liability.',
];

test('LICENSE is the Apache License 2.0 in full, as package.json declares', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { license: string };
  assert.equal(pkg.license, 'Apache-2.0');
  const text = readFileSync(new URL('LICENSE', ROOT), 'utf8');
  assert.match(text, /^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\/\s/);
  let at = 0;
  SECTIONS.forEach((title, i) => {
    const found = text.indexOf(`${i + 1}. ${title}`, at);
    assert.ok(found > at, `section ${i + 1} (${title}) follows section ${i}`);
    at = found;
  });
  const end = text.indexOf('END OF TERMS AND CONDITIONS', at);
  assert.ok(end > at, 'the terms end after section 9');
  assert.ok(text.indexOf('APPENDIX: How to apply the Apache License to your work.', end) > end, 'the appendix follows');
  // The full text runs to about 11,300 characters; a section cut short would fall well below.
  assert.ok(text.length > 11_000, `LICENSE is ${text.length} characters: the full text is longer`);
  assert.match(text, /WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied\.\s+See the License for the specific language governing permissions and\s+limitations under the License\.\s*$/);
});
