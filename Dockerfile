# syntax=docker/dockerfile:1
#
# nodepulse agent image: `docker build -t nodepulse:0.1.0 .`
#
# Three stages on Node.js 24 LTS (Debian bookworm, slim):
# - build:  every dependency, then `tsc -p tsconfig.build.json` into dist/;
# - deps:   production dependencies only (`npm ci --omit=dev`), so no compiler, linter, test
#           tool or the devDependency `node` binary reaches the image;
# - final:  the Node.js runtime, dist/, proto/ and the production node_modules, nothing else.
#           npm, npx, corepack and yarn are removed: the agent never installs anything.
#
# Root: the image runs as uid 0 ONLY because the CRI socket (containerd's or CRI-O's) is
# root:root 0660. The manifests drop every capability, forbid privilege escalation, make the
# root filesystem read-only and apply the RuntimeDefault seccomp profile; the agent's CRI client
# can call read-only RPCs only. Where the socket has a group of its own (containerd's
# `[grpc] gid`), the manifests' non-root mode runs it as uid 65532 with that group instead.
#
# Built without Docker or a registry by scripts/build-image.ts (`npm run image`): podman, on a
# base assembled locally under the NODE_IMAGE name. Architecture: amd64 only (docs/install.md).

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the devDependency `node` would otherwise fetch a second Node.js binary.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY proto ./proto
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS final
ARG NODE_IMAGE
ARG VERSION=0.1.0
# The commit the image was built from (scripts/build-image.ts passes `git rev-parse HEAD`).
ARG REVISION=unknown
LABEL org.opencontainers.image.title="nodepulse" \
      org.opencontainers.image.description="Per-node Kubernetes agent whose Lease moves only while the container runtime answers relists" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/nodepulse/nodepulse" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /opt/nodepulse
ENV NODE_ENV=production
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/proto ./proto
COPY package.json ./
EXPOSE 9356
# `nodepulse agent` with the agent's Node.js settings (src/cli/agent-node-flags.ts, which a test
# holds this line to): 1 MiB young-generation semi-spaces and one V8 worker thread, for its RSS.
ENTRYPOINT ["node", "--max-semi-space-size=1", "--v8-pool-size=1", "dist/src/cli/main.js", "agent"]
