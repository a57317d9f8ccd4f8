# syntax=docker/dockerfile:1
#
# nodepulse agent image, one per architecture (amd64, arm64):
#   docker buildx build --platform linux/amd64,linux/arm64 -t nodepulse:0.1.0 .
#
# Two stages:
# - build:  on the BUILD machine's platform, whatever the target: every dependency, then
#           `tsc -p tsconfig.build.json` into dist/, then scripts/bundle.ts, which bundles the
#           commands and the production packages they import into bundle/ (about 3 MiB of
#           JavaScript, the CRI proto, the bundled packages' licenses). JavaScript is the same on
#           every architecture, so an arm64 image needs no arm64 program to run during its build.
# - final:  RUNTIME_IMAGE, the TARGET platform's Node.js and only what it needs to run (glibc,
#           libstdc++, libgcc_s, CA certificates, root and nonroot 65532 in /etc/passwd; no
#           shell, no npm, no package manager), plus bundle/. COPY steps only: no emulation.
#           The image holds no node_modules, no compiler, no test tool, no dev dependency.
#
# BUILDPLATFORM and TARGETPLATFORM are the ones BuildKit sets; buildah 1.28 sets only
# TARGETPLATFORM (from --platform), so scripts/build-image.ts passes BUILDPLATFORM itself. The
# final stage names its platform although it is the default: buildah 1.28 otherwise looks for
# its base on the previous stage's platform.
#
# NODE_IMAGE and RUNTIME_IMAGE name the same Node.js release. RUNTIME_IMAGE is assembled by
# scripts/runtime-base.ts (for each architecture, from Debian's packages and the npm package
# node-linux-<cpu>), not pulled: no registry publishes it.
#
# Root: the image runs as uid 0 ONLY because the CRI socket (containerd's or CRI-O's) is
# root:root 0660. The manifests drop every capability, forbid privilege escalation, make the
# root filesystem read-only and apply the RuntimeDefault seccomp profile; the agent's CRI client
# can call read-only RPCs only. Where the socket has a group of its own (containerd's
# `[grpc] gid`), the manifests' non-root mode runs it as uid 65532 with that group instead.
#
# Built without Docker or a registry by scripts/build-image.ts (`npm run image`): podman, on
# bases assembled locally under the NODE_IMAGE and RUNTIME_IMAGE names, once per architecture,
# then a manifest list of both (docs/install.md).

ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG RUNTIME_IMAGE=localhost/nodepulse-runtime:24.21.0-bookworm

FROM --platform=${BUILDPLATFORM} ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the devDependency `node` would otherwise fetch a second Node.js binary.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.ts ./scripts/
COPY src ./src
COPY proto ./proto
RUN npm run build && npm run bundle

FROM --platform=${TARGETPLATFORM} ${RUNTIME_IMAGE} AS final
ARG NODE_IMAGE
ARG RUNTIME_IMAGE
ARG VERSION=0.1.0
# The commit the image was built from (scripts/build-image.ts passes `git rev-parse HEAD`). No
# source label: no repository is published, and a label naming one would send readers nowhere.
ARG REVISION=unknown
LABEL org.opencontainers.image.title="nodepulse" \
      org.opencontainers.image.description="Per-node Kubernetes agent whose Lease moves only while the container runtime answers relists" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"
WORKDIR /opt/nodepulse
# MALLOC_ARENA_MAX=1: one glibc malloc arena for all of the agent's threads, for its RSS
# (src/cli/agent-node-flags.ts, AGENT_ENV, which a test holds this line to).
ENV NODE_ENV=production MALLOC_ARENA_MAX=1
COPY --from=build /src/bundle ./
EXPOSE 9356
# `nodepulse agent` with the agent's Node.js settings (src/cli/agent-node-flags.ts, which a test
# holds this line to): 1 MiB young-generation semi-spaces, one V8 worker thread and no optimising
# tier past Maglev, for its RSS.
# The package's bin is dist/src/cli/main.js, and so is the bundle's entry.
ENTRYPOINT ["node", "--max-semi-space-size=1", "--v8-pool-size=1", "--max-opt=2", "dist/src/cli/main.js", "agent"]
