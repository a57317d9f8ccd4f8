// The full CRI proto (proto/runtime/v1/api.proto), loaded with @grpc/proto-loader.
//
// proto/ is the one source of the CRI messages. This module loads it wherever full messages are
// needed: the rare calls the agent never makes (PodSandboxStatus, ContainerStatus, whose
// serializers the runtime client hands to grpc-js), the simulated runtime to encode its answers,
// and the tests as the reference decoder the lean reader is checked against. The agent's
// relists, Version and Status do not use it (see lean-decode.ts).
//
// Assumptions:
//   - proto/ sits at the package root, beside src/ in a checkout and beside dist/ in an
//     installed package. The file is found by walking up from this module, at most
//     MAX_PROTO_SEARCH_DEPTH folders, so it works from src/cri/ and from dist/src/cri/ alike.
//   - proto-loader (and protobufjs under it) is imported on first use, not at start: a process
//     that only relists never pays for it.
// Failure modes: a missing or unparsable proto rejects loadCriService() with the loader's error;
// the rejection is not cached, so a later call tries again.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options, ServiceDefinition } from '@grpc/proto-loader';

/** The package and service, as upstream names them. */
export const CRI_SERVICE_NAME = 'runtime.v1.RuntimeService';
/** The proto file, relative to the proto/ folder. */
export const CRI_PROTO_FILE = 'runtime/v1/api.proto';

/**
 * The full decode nodepulse measures itself against: 64-bit integers as decimal strings,
 * enums as their names, absent fields filled with defaults.
 */
export const FULL_DECODE_OPTIONS: Options = {
  longs: String,
  enums: String,
  defaults: true,
};

// src/cri → package root is 2 levels; dist/src/cri → 3. A little slack, then stop.
const MAX_PROTO_SEARCH_DEPTH = 6;

/** The absolute path of the proto/ folder. Throws when it cannot be found. */
export function findProtoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i <= MAX_PROTO_SEARCH_DEPTH; i++) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, CRI_PROTO_FILE))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`protoRoot: proto/${CRI_PROTO_FILE} must exist within ${MAX_PROTO_SEARCH_DEPTH} folders above ${from}`);
}

/** The absolute path of proto/runtime/v1/api.proto. */
export function criProtoPath(): string {
  return join(findProtoRoot(), CRI_PROTO_FILE);
}

let loading: Promise<ServiceDefinition> | undefined;

/**
 * The RuntimeService definition: per method, its path and the full serializers and
 * deserializers (FULL_DECODE_OPTIONS). Loaded once per process.
 */
export function loadCriService(): Promise<ServiceDefinition> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function load(): Promise<ServiceDefinition> {
  const protoLoader = await import('@grpc/proto-loader');
  const root = findProtoRoot();
  const definition = await protoLoader.load(CRI_PROTO_FILE, { ...FULL_DECODE_OPTIONS, includeDirs: [root] });
  const service = definition[CRI_SERVICE_NAME];
  if (service === undefined || !isServiceDefinition(service)) {
    throw new Error(`criProto: ${CRI_SERVICE_NAME} must be a service in ${join(root, CRI_PROTO_FILE)}`);
  }
  return service;
}

function isServiceDefinition(value: object): value is ServiceDefinition {
  return !('format' in value) && !('fileDescriptorProtos' in value);
}
