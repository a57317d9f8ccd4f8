// A small container image whose one layer is fresh random bytes, for image activity on a real
// containerd: every archive is a new image (new layer digest, new config digest), so an import
// really writes content and unpacks a snapshot, and a removal really leaves garbage for
// containerd's collector, as pulls and image GC do on a node.
//
// The archive is a docker-archive (what `ctr images import` reads), like busybox-image.ts's, but
// it is never run: its one file is data, not a program. It is written to `dir` and the caller
// removes it.
//
// Failure modes: a full disk throws from writeFileSync.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tarArchive } from '../fixtures/tar-archive.ts';

export interface NoiseImage {
  /** The archive's path. */
  readonly path: string;
  /** The one tag it is imported under. */
  readonly ref: string;
}

/** Writes a docker-archive of `layerBytes` random bytes tagged `ref` into `dir`. */
export function noiseImage(dir: string, ref: string, layerBytes: number): NoiseImage {
  const layer = tarArchive([{ type: 'file', name: 'noise.bin', data: randomBytes(layerBytes) }]);
  const config = Buffer.from(
    JSON.stringify({
      architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
      os: 'linux',
      config: {},
      rootfs: { type: 'layers', diff_ids: [`sha256:${createHash('sha256').update(layer).digest('hex')}`] },
    }),
  );
  const manifest = Buffer.from(JSON.stringify([{ Config: 'config.json', RepoTags: [ref], Layers: ['layer.tar'] }]));
  const path = join(dir, `${createHash('sha256').update(ref).digest('hex').slice(0, 16)}.tar`);
  writeFileSync(
    path,
    tarArchive([
      { type: 'file', name: 'layer.tar', data: layer },
      { type: 'file', name: 'config.json', data: config },
      { type: 'file', name: 'manifest.json', data: manifest },
    ]),
  );
  return { path, ref };
}
