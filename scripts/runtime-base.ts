// The base of the image's final stage (the Dockerfile's RUNTIME_IMAGE): only what Node.js needs
// to run, for one architecture, assembled as a tar without running a single program of that
// architecture, so the arm64 base is made on an amd64 machine with no emulation.
//
// What goes in, and nothing else:
//   - Node.js: the `node` devDependency's version, from the npm package `node-linux-<cpu>` (the
//     package the devDependency itself installs), stripped of its symbol tables with the
//     architecture's own binutils strip (103.5 MiB instead of 120.7 for amd64). Its LICENSE goes
//     to /usr/local/share/doc/node/.
//   - The shared libraries Node.js loads, and theirs: the program interpreter and every
//     DT_NEEDED, followed from the node binary through each library (`readelf`), resolved in
//     Debian's own packages (libc6, libstdc++6, libgcc-s1), links kept as Debian lays them out.
//     glibc's gconv modules, locales, tools and headers stay out: Node.js does its own character
//     sets and time zones (ICU is built in), and since glibc 2.34 the `files` and `dns` name
//     services are inside libc.so.6 itself.
//   - The CA certificates of Debian's ca-certificates, as the one bundle
//     /etc/ssl/certs/ca-certificates.crt (what its update-ca-certificates writes: every
//     certificate, in name order). The agent itself trusts only the cluster's CA; the bundle is
//     there for `--use-openssl-ca` or NODE_EXTRA_CA_CERTS, as a base image is expected to carry.
//   - /etc/passwd and /etc/group with root (0) and nonroot (NON_ROOT_UID, the chart's and the
//     kustomize component's default uid), /etc/nsswitch.conf (files, then dns for hosts), and an
//     empty /tmp (1777).
//   - Each Debian package's copyright file.
// No shell, no package manager, no npm: the image runs `node` and nothing else (its probes are
// HTTP GETs).
//
// Debian's packages come from `mmdebstrap --variant=extract`, which downloads and unpacks them
// (with their dependencies) and runs none of their scripts: no emulation, and nothing of the
// build machine (its apt sources, its dpkg architectures) is changed. Everything else is done
// here, in TypeScript and with host tools that read and write any architecture's ELF files.
//
// The tar is reproducible for the same downloaded packages (sorted, root-owned, one mtime) and
// cached outside the checkout (build-image.ts: $NODEPULSE_CACHE_DIR/image-bases), keyed by every
// input: this file, the architecture, the Node.js version, the suite and the Debian versions of
// PACKAGES that a download would fetch now (debian-versions.ts). A cold build takes about 10 s
// per architecture here, most of it the downloads.
//
// Failure modes: a missing tool (mmdebstrap, npm, readelf, the strip for the architecture, tar)
// or a failed download throws with the command and the tail of its output; a library Node.js
// needs that Debian's packages do not hold throws, naming it. Nothing partial is left in the
// cache.
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { debianVersions } from './debian-versions.ts';
import { runTool, type ToolLog } from './run-tool.ts';

/** Bump when the base's layout changes (this file's text is in the key too). */
const RUNTIME_FORMAT = 'runtime-v1';
const SUITE = 'bookworm';
/** The uid (and gid) of the image's non-root user: the chart's nonRoot.uid default. */
export const NON_ROOT_UID = 65532;
/** Debian's packages the libraries and certificates come from. */
export const RUNTIME_PACKAGES: readonly string[] = ['libc6', 'libstdc++6', 'libgcc-s1', 'ca-certificates'];
const NODE_PATH = '/usr/local/bin/node';
/** Where the image's PATH finds node (podman import --change ENV PATH=…). */
export const RUNTIME_PATH = '/usr/local/bin:/usr/bin:/bin';
const MMDEBSTRAP_TIMEOUT_MS = 600_000;
const NPM_TIMEOUT_MS = 300_000;
const TOOL_TIMEOUT_MS = 120_000;
/** mtime of every entry: 2020-01-01T00:00:00Z. */
const FIXED_MTIME = '@1577836800';

/** An architecture the image is built for, by its `kubernetes.io/arch` (and OCI) name. */
export interface Architecture {
  readonly name: string;
  /** Debian's multiarch triplet: the library folder and the binutils prefix. */
  readonly triplet: string;
  /** Node.js's name for the CPU, as the npm package `node-linux-<cpu>` has it. */
  readonly nodeCpu: string;
  /** The ELF header's e_machine of this architecture's programs. */
  readonly elfMachine: number;
}

export const ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  amd64: { name: 'amd64', triplet: 'x86_64-linux-gnu', nodeCpu: 'x64', elfMachine: 62 },
  arm64: { name: 'arm64', triplet: 'aarch64-linux-gnu', nodeCpu: 'arm64', elfMachine: 183 },
};

export interface RuntimeBaseInputs {
  readonly repoRoot: string;
  readonly cacheDir: string;
  readonly architecture: Architecture;
  readonly log: ToolLog;
}

export interface RuntimeBase {
  readonly path: string;
  /** sha256 over every input: part of the image's own cache key. */
  readonly key: string;
  readonly nodeVersion: string;
  readonly cached: boolean;
}

/** The `node` devDependency's installed version: the Node.js the image runs. */
export function nodeVersion(repoRoot: string): string {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'node_modules', 'node', 'package.json'), 'utf8')) as { version: string };
  return version;
}

/** Returns the cached runtime base tar for this architecture, assembling it first when there is none. */
export async function runtimeBaseTar(inputs: RuntimeBaseInputs): Promise<RuntimeBase> {
  const arch = inputs.architecture;
  const version = nodeVersion(inputs.repoRoot);
  const key = createHash('sha256')
    .update(`${RUNTIME_FORMAT}\n${SUITE}\n${arch.name}\n${version}\n${await debianVersions(RUNTIME_PACKAGES)}\n`)
    .update(readFileSync(new URL(import.meta.url)))
    .digest('hex');
  const path = join(inputs.cacheDir, `runtime-${arch.name}-${key.slice(0, 16)}.tar`);
  if (existsSync(path)) return { path, key, nodeVersion: version, cached: true };

  mkdirSync(inputs.cacheDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), `nodepulse-image-runtime-${arch.name}-`));
  const partial = join(inputs.cacheDir, `partial-${process.pid}-runtime-${arch.name}.tar`);
  try {
    const debian = join(work, 'debian');
    const root = join(work, 'root');
    mkdirSync(debian);
    mkdirSync(root);
    inputs.log(`runtime ${arch.name}: mmdebstrap --variant=extract ${RUNTIME_PACKAGES.join(' ')}`);
    await runTool('mmdebstrap', ['--quiet', '--variant=extract', `--architectures=${arch.name}`, `--include=${RUNTIME_PACKAGES.join(',')}`, SUITE, join(work, 'debian.tar')], { timeoutMs: MMDEBSTRAP_TIMEOUT_MS });
    await runTool('tar', ['-xf', join(work, 'debian.tar'), '-C', debian], { timeoutMs: TOOL_TIMEOUT_MS });

    inputs.log(`runtime ${arch.name}: npm pack node-linux-${arch.nodeCpu}@${version}`);
    const packed = (await runTool('npm', ['pack', `node-linux-${arch.nodeCpu}@${version}`, '--pack-destination', work, '--silent'], { cwd: work, timeoutMs: NPM_TIMEOUT_MS })).trim().split('\n').at(-1) ?? '';
    await runTool('tar', ['-xzf', join(work, packed), '-C', work, 'package/bin/node', 'package/LICENSE'], { timeoutMs: TOOL_TIMEOUT_MS });
    const machine = elfMachineOf(join(work, 'package', 'bin', 'node'));
    if (machine !== arch.elfMachine) throw new Error(`runtime ${arch.name}: ${packed}'s node is for ELF machine ${machine}, must be ${arch.elfMachine}`);
    mkdirSync(join(root, dirname(NODE_PATH)), { recursive: true });
    await runTool(`${arch.triplet}-strip`, ['--strip-all', '-o', join(root, NODE_PATH), join(work, 'package', 'bin', 'node')], { timeoutMs: TOOL_TIMEOUT_MS });
    mkdirSync(join(root, 'usr/local/share/doc/node'), { recursive: true });
    copyFileSync(join(work, 'package', 'LICENSE'), join(root, 'usr/local/share/doc/node/LICENSE'));

    for (const file of await sharedLibraries(debian, join(root, NODE_PATH), arch)) copyEntry(debian, root, file);
    for (const pkg of RUNTIME_PACKAGES) copyCopyright(debian, root, pkg);
    writeCaBundle(debian, root);
    writeUsers(root);

    inputs.log(`runtime ${arch.name}: tar`);
    await runTool('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=${FIXED_MTIME}`, '-C', root, '-cf', partial, '.'], { timeoutMs: TOOL_TIMEOUT_MS });
    for (const old of readdirSync(inputs.cacheDir).filter((f) => f.startsWith(`runtime-${arch.name}-`))) rmSync(join(inputs.cacheDir, old), { force: true });
    renameSync(partial, path);
    return { path, key, nodeVersion: version, cached: false };
  } finally {
    rmSync(partial, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/** An ELF file's e_machine (a little-endian ELF header, as both architectures' are). */
export function elfMachineOf(path: string): number {
  const header = readFileSync(path).subarray(0, 20);
  if (header.subarray(0, 4).toString('latin1') !== '\x7fELF') throw new Error(`${path}: must be an ELF file`);
  return header.readUInt16LE(18);
}

/** What `readelf` says an ELF file asks the dynamic linker for: its interpreter and DT_NEEDED. */
export function parseReadelf(output: string): { interpreter: string | undefined; needed: string[] } {
  const interpreter = /\[Requesting program interpreter: ([^\]]+)\]/.exec(output)?.[1];
  const needed = [...output.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1] as string);
  return { interpreter, needed };
}

/**
 * Every file and link (paths inside `debian`, absolute) the dynamic linker opens to start
 * `binary`: its interpreter and the closure of DT_NEEDED, searched in the architecture's
 * library folders as glibc's default path has them.
 */
async function sharedLibraries(debian: string, binary: string, arch: Architecture): Promise<string[]> {
  const searchDirs = [`/lib/${arch.triplet}`, `/usr/lib/${arch.triplet}`, '/lib', '/usr/lib'];
  const kept = new Set<string>();
  const queue: string[] = [binary];
  const seenSonames = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift() as string;
    const { interpreter, needed } = parseReadelf(await runTool('readelf', ['-W', '-l', '-d', file], { timeoutMs: TOOL_TIMEOUT_MS }));
    if (interpreter !== undefined && !kept.has(interpreter)) {
      if (!existsInRoot(debian, interpreter)) throw new Error(`runtime ${arch.name}: the interpreter ${interpreter} (of ${file}) must be in Debian's ${RUNTIME_PACKAGES.join(', ')}`);
      for (const p of linkChain(debian, interpreter)) kept.add(p);
      queue.push(join(debian, linkChain(debian, interpreter).at(-1) as string));
    }
    for (const soname of needed) {
      if (seenSonames.has(soname)) continue;
      seenSonames.add(soname);
      const found = searchDirs.map((d) => posix.join(d, soname)).find((p) => existsInRoot(debian, p));
      if (found === undefined) throw new Error(`runtime ${arch.name}: ${soname} (needed by ${file}) must be in Debian's ${RUNTIME_PACKAGES.join(', ')}`);
      const chain = linkChain(debian, found);
      for (const p of chain) kept.add(p);
      queue.push(join(debian, chain.at(-1) as string));
    }
  }
  return [...kept].sort();
}

function existsInRoot(root: string, path: string): boolean {
  try {
    lstatSync(join(root, path));
    return true;
  } catch {
    return false;
  }
}

/** `path` and every link it goes through inside `root`, ending at the real file. */
function linkChain(root: string, path: string): string[] {
  const chain = [path];
  for (let hops = 0; hops < 16; hops++) {
    const current = chain.at(-1) as string;
    if (!lstatSync(join(root, current)).isSymbolicLink()) return chain;
    const target = readlinkSync(join(root, current));
    chain.push(posix.isAbsolute(target) ? target : posix.join(posix.dirname(current), target));
  }
  throw new Error(`runtime: ${path} is a loop of links`);
}

/** Copies one file or link from the unpacked packages into the base, making its folders. */
function copyEntry(from: string, to: string, path: string): void {
  const source = join(from, path);
  const target = join(to, path);
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(target) || existsInRoot(to, path)) return;
  if (lstatSync(source).isSymbolicLink()) symlinkSync(readlinkSync(source), target);
  else copyFileSync(source, target);
}

/** A package's /usr/share/doc/<pkg>/copyright; libstdc++6's folder is a link to gcc's. */
function copyCopyright(debian: string, root: string, pkg: string): void {
  const chain = linkChain(debian, `/usr/share/doc/${pkg}`);
  for (const p of chain.slice(0, -1)) copyEntry(debian, root, p);
  const file = posix.join(chain.at(-1) as string, 'copyright');
  if (!existsInRoot(debian, file)) throw new Error(`runtime: Debian's ${pkg} must carry ${file}`);
  copyEntry(debian, root, file);
}

/** Every certificate ca-certificates ships, in name order, as update-ca-certificates bundles them. */
function writeCaBundle(debian: string, root: string): void {
  const dir = join(debian, 'usr/share/ca-certificates');
  const certs = (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.crt')).sort();
  if (certs.length === 0) throw new Error(`runtime: Debian's ca-certificates must hold certificates under ${dir}`);
  const bundle = certs.map((f) => `${readFileSync(join(dir, f), 'utf8').trim()}\n`).join('');
  mkdirSync(join(root, 'etc/ssl/certs'), { recursive: true });
  writeFileSync(join(root, 'etc/ssl/certs/ca-certificates.crt'), bundle);
}

function writeUsers(root: string): void {
  writeFileSync(join(root, 'etc/passwd'), `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NON_ROOT_UID}:${NON_ROOT_UID}:nonroot:/home/nonroot:/sbin/nologin\n`);
  writeFileSync(join(root, 'etc/group'), `root:x:0:\nnonroot:x:${NON_ROOT_UID}:\n`);
  writeFileSync(join(root, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  mkdirSync(join(root, 'tmp'));
  chmodSync(join(root, 'tmp'), 0o1777);
}
