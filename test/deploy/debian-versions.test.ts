// The image's bases are keyed by the Debian versions apt offers (scripts/debian-versions.ts):
// the candidate of each package is read from `apt-cache policy`, and a package apt does not
// know, or knows without a candidate, stops the build instead of keying it by nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidateOf } from '../../scripts/debian-versions.ts';

const POLICY = `libc6:
  Installed: 2.36-9+deb12u13
  Candidate: 2.36-9+deb12u14
  Version table:
     2.36-9+deb12u14 500
        500 http://mirror/debian-security bookworm-security/main amd64 Packages
libstdc++6:
  Installed: (none)
  Candidate: 12.2.0-14+deb12u1
  Version table:
     12.2.0-14+deb12u1 500
ghost:
  Installed: (none)
  Candidate: (none)
  Version table:
`;

test('each package takes the candidate of its own block, not the installed version', () => {
  assert.equal(candidateOf(POLICY, 'libc6'), '2.36-9+deb12u14');
  assert.equal(candidateOf(POLICY, 'libstdc++6'), '12.2.0-14+deb12u1');
});

test('a package without a candidate, or absent from the output, is refused by name', () => {
  assert.throws(() => candidateOf(POLICY, 'ghost'), { message: 'apt-cache policy: ghost must have a candidate version (run apt-get update)' });
  assert.throws(() => candidateOf(POLICY, 'libgcc-s1'), { message: 'apt-cache policy: libgcc-s1 must have a candidate version (run apt-get update)' });
});
