// Renders the deploy/ manifests with the real tools: `kubectl kustomize` (kustomize v5 built
// into kubectl) and `helm template` / `helm lint`, both from k8sTools(). Helm's cache, config
// and data folders go to a private temporary folder, removed by the caller's cleanup, so a test
// run never touches the user's ~/.cache/helm.
//
// Failure modes: a tool that exits non-zero throws with its stderr; a render that is not YAML
// throws from the parser. Every call has a timeout, so a wedged tool fails the test instead of
// hanging it.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { k8sTools } from '../support/k8s-tools.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
export const CHART_DIR = join(REPO_ROOT, 'deploy', 'helm', 'nodepulse');

/**
 * Helm values that turn every optional component and the controller on, as the kustomize `all`
 * overlay does. The admission policy and the priority level are on by default in both.
 */
export const HELM_ALL_COMPONENTS = [
  'monitoring.enabled=true',
  'grafanaDashboard.enabled=true',
  'networkPolicy.enabled=true',
  'controller.enabled=true',
] as const;

/**
 * The kinds a Kubernetes 1.31 API server serves that the chart asks about
 * (.Capabilities.APIVersions): `helm template` without a cluster knows group/versions only, so
 * each render is told what such a server's discovery lists. A render for an older server passes
 * `apiVersions: []`.
 */
export const SERVED_KINDS_1_31: readonly string[] = ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'];

/** Whether an object is a Helm hook (helm.sh/hook): the uninstall hook, the test. */
export function isHook(o: K8sObject): boolean {
  return (o.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'] !== undefined;
}

/** The objects `helm install` keeps as the release's own: every rendered object but the hooks. */
export function withoutHooks(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((o) => !isHook(o));
}

/** The objects of one hook event (`post-delete`, `test`), in render order. */
export function hookObjects(objects: readonly K8sObject[], event: string): K8sObject[] {
  return objects.filter((o) => ((o.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'] ?? '').split(',').includes(event));
}

const TOOL_TIMEOUT_MS = 60_000;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** A rendered Kubernetes object, as parsed from YAML. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [key: string]: unknown;
}

/** Parses a multi-document YAML stream; empty documents are skipped, a YAML error throws. */
export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`render: YAML must parse: ${doc.errors[0]?.message ?? ''}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as K8sObject);
  }
  return objects;
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(file, args, {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
    timeout: TOOL_TIMEOUT_MS,
    maxBuffer: MAX_OUTPUT_BYTES,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `kubectl kustomize <dir>` (relative to the repo root), parsed. */
export function renderKustomize(dir: string): K8sObject[] {
  return parseManifests(run(k8sTools().kubectl, ['kustomize', dir]));
}

/**
 * `kubectl kustomize` of an overlay made on the fly, as a user would write one: the given
 * resources and components (repo-relative folders, e.g. `deploy/base`,
 * `deploy/components/controller`), in that order, then the given patches: a YAML text is written
 * as a strategic-merge patch file, an object is an inline `patches` entry ({target, patch}). The
 * overlay lives in a temporary folder, removed before this returns.
 */
export function renderKustomizeOverlay(resources: readonly string[], components: readonly string[], patches: readonly (string | object)[] = []): K8sObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-overlay-'));
  try {
    const rel = (p: string): string => relative(dir, join(REPO_ROOT, p));
    patches.forEach((patch, i) => {
      if (typeof patch === 'string') writeFileSync(join(dir, `patch-${i}.yaml`), patch);
    });
    writeFileSync(join(dir, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: resources.map(rel),
      components: components.map(rel),
      ...(patches.length === 0 ? {} : { patches: patches.map((patch, i) => (typeof patch === 'string' ? { path: `patch-${i}.yaml` } : patch)) }),
    }));
    return parseManifests(run(k8sTools().kubectl, ['kustomize', dir]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A value for Helm: `key=value` for `--set`, or `{json: 'key=<JSON>'}` for `--set-json` (lists of objects, empty objects). */
export type HelmSet = string | { readonly json: string };

/** A Helm runner with private cache/config/data folders; call close() when done. */
export interface HelmRunner {
  /** `helm template`, for a 1.31 server (SERVED_KINDS_1_31) unless `apiVersions` says otherwise. */
  template(sets: readonly HelmSet[], opts?: { release?: string; namespace?: string; apiVersions?: readonly string[]; chart?: string }): K8sObject[];
  /** `helm template` that is expected to fail: its stderr, or undefined when it rendered. */
  templateError(sets: readonly HelmSet[]): string | undefined;
  /**
   * NOTES.txt as `helm install` would print it. `helm template` never renders NOTES, so a copy
   * of the chart gets one more template that renders the same text into a ConfigMap; `lookup`
   * answers nothing there, as in `helm template`.
   */
  notes(sets: readonly HelmSet[], opts?: { release?: string; namespace?: string; apiVersions?: readonly string[] }): string;
  /** `helm lint --strict`, pass or fail: whether it passed, and everything it wrote. */
  lintOutcome(sets: readonly string[]): { passed: boolean; output: string };
  lint(sets: readonly string[]): string;
  close(): void;
}

export function helmRunner(): HelmRunner {
  const home = mkdtempSync(join(tmpdir(), 'nodepulse-helm-'));
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
  };
  const setArgs = (sets: readonly HelmSet[]): string[] => sets.flatMap((s) => (typeof s === 'string' ? ['--set', s] : ['--set-json', s.json]));
  const helm = k8sTools().helm;
  const templateArgs = (sets: readonly HelmSet[], release = 'nodepulse', namespace = 'nodepulse', apiVersions: readonly string[] = SERVED_KINDS_1_31, chart = CHART_DIR): string[] =>
    ['template', release, chart, '--namespace', namespace, '--kube-version', '1.31.0', ...apiVersions.flatMap((v) => ['--api-versions', v]), ...setArgs(sets)];
  const attempt = (args: readonly string[]): { passed: boolean; output: string } => {
    const r = spawnSync(helm, args, { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: TOOL_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES });
    return { passed: r.status === 0, output: `${r.stdout}${r.stderr}` };
  };
  return {
    template(sets, opts = {}) {
      return parseManifests(run(helm, templateArgs(sets, opts.release, opts.namespace, opts.apiVersions, opts.chart), env));
    },
    templateError(sets) {
      const r = attempt(templateArgs(sets));
      return r.passed ? undefined : r.output;
    },
    notes(sets, opts = {}) {
      const copy = join(home, 'chart-with-notes');
      rmSync(copy, { recursive: true, force: true });
      cpSync(CHART_DIR, copy, { recursive: true, dereference: true });
      cpSync(join(copy, 'templates', 'NOTES.txt'), join(copy, 'files', 'notes.txt'));
      writeFileSync(join(copy, 'templates', 'zz-notes.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rendered-notes\ndata:\n  notes: {{ tpl (.Files.Get "files/notes.txt") . | toJson }}\n');
      const args = ['template', opts.release ?? 'nodepulse', copy, '--namespace', opts.namespace ?? 'nodepulse', '--kube-version', '1.31.0', ...(opts.apiVersions ?? SERVED_KINDS_1_31).flatMap((v) => ['--api-versions', v]), ...setArgs(sets)];
      const data = only(parseManifests(run(helm, args, env)), 'ConfigMap', 'rendered-notes')['data'] as { notes: string };
      return data.notes;
    },
    lintOutcome(sets) {
      return attempt(['lint', CHART_DIR, '--strict', ...setArgs(sets)]);
    },
    lint(sets) {
      return run(helm, ['lint', CHART_DIR, '--strict', ...setArgs(sets)], env);
    },
    close() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The one object of a kind (and name, when given); throws when there is not exactly one. */
export function only(objects: readonly K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(`render: ${kind}${name === undefined ? '' : `/${name}`} must appear exactly once, found ${found.length}`);
  }
  return found[0] as K8sObject;
}
