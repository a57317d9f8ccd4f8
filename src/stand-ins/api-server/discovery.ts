// Discovery documents: /api (APIVersions), /apis (APIGroupList), /api/v1 and
// /apis/<group>/<version> (APIResourceList), and /version.
//
// Only the legacy (unaggregated) form is served. kubectl 1.31 asks for the aggregated form
// first (Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, ...,
// application/json) and falls back to the legacy documents when the answer's Content-Type is
// plain application/json, which is what a server without aggregated discovery sends.
// Verbs list only what the stand-in implements (no deletecollection).

import { apiVersionOf, RESOURCES, type ResourceDef } from './resources.ts';

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** The version the stand-in reports: the kubectl it is tested with, marked as a stand-in in gitCommit. */
export const SERVER_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.9',
  gitCommit: 'nodepulse-apiserver-stand-in',
  gitTreeState: 'clean',
  buildDate: '2025-05-15T00:00:00Z',
  goVersion: 'go1.23.8',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groups(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of RESOURCES) {
    if (r.group === '') continue;
    const versions = out.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    out.set(r.group, versions);
  }
  return out;
}

export function apiGroupList(): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups()].map(([name, versions]) => ({
      name,
      versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${name}/${versions[0] ?? 'v1'}`, version: versions[0] ?? 'v1' },
    })),
  };
}

/** The APIGroup document for /apis/<group>, or undefined for an unknown group. */
export function apiGroup(group: string): object | undefined {
  const versions = groups().get(group);
  if (versions === undefined) return undefined;
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions: versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${group}/${versions[0] ?? 'v1'}`, version: versions[0] ?? 'v1' },
  };
}

function resourceEntries(def: ResourceDef): object[] {
  const main: Record<string, unknown> = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: VERBS,
  };
  if (def.shortNames.length > 0) main['shortNames'] = def.shortNames;
  const out: object[] = [main];
  if (def.hasStatus) {
    out.push({ name: `${def.resource}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: ['get', 'patch', 'update'] });
  }
  return out;
}

/** The APIResourceList for a group version, or undefined when nothing is served there. */
export function apiResourceList(group: string, version: string): object | undefined {
  const defs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (defs.length === 0) return undefined;
  const groupVersion = apiVersionOf(defs[0] as ResourceDef);
  const resources = defs.flatMap(resourceEntries);
  // The core group's list carries no apiVersion; named groups' lists do.
  return group === ''
    ? { kind: 'APIResourceList', groupVersion, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}
