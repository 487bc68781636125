# Skiff's image for a cluster (deploy/kubernetes/): the server, which runs `skiff up --in-cluster`, and
# the launcher that task Pods copy from it (/usr/local/bin/skiff-launcher).
# Pods run on the cluster's nodes, so none of the local substrate's parts (the Python environment, the
# native container monitor, bubblewrap) are in it.
#
#   docker build -t REGISTRY/skiff:TAG . && docker push REGISTRY/skiff:TAG
#
# test/dockerfile.test.ts checks that what this file copies exists after a build.

# KFP's launcher for task Pods on nodes without Skiff (launcher/, a static Go binary): with
# `artifacts.launcherImage` set to this image, each task Pod's init container copies it in
FROM golang:1.26-bookworm AS launcher
WORKDIR /opt/skiff
COPY launcher launcher
RUN cd launcher && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /opt/skiff/launcher/skiff-launcher .

FROM node:20-bookworm-slim AS build
WORKDIR /opt/skiff
# better-sqlite3 and onnxruntime-node install prebuilt binaries; the toolchain builds better-sqlite3
# where none fits the platform
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY src src
COPY web web
# the server (dist/src), then the dashboard (build/web), then only what runs
RUN npx tsc -p tsconfig.json \
 && npx tsc -p web/tsconfig.json \
 && npx vite build web --logLevel warn \
 && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    SKIFF_DATA_DIR=/var/lib/skiff
WORKDIR /opt/skiff
COPY --from=build /opt/skiff/package.json package.json
COPY --from=build /opt/skiff/node_modules node_modules
COPY --from=build /opt/skiff/dist/src dist/src
# read at run time: the OpenAPI, KServe, Go-type and protobuf schemas
COPY --from=build /opt/skiff/src/api/schemas src/api/schemas
COPY --from=build /opt/skiff/build/web build/web
COPY bin/skiff.js bin/skiff.js
COPY --from=launcher /opt/skiff/launcher/skiff-launcher /usr/local/bin/skiff-launcher
RUN groupadd --gid 10001 skiff \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/skiff --shell /usr/sbin/nologin skiff \
 && mkdir -p /var/lib/skiff && chown 10001:10001 /var/lib/skiff
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["node", "/opt/skiff/bin/skiff.js", "up", "--in-cluster"]
CMD ["--host", "0.0.0.0", "--port", "8080", "--data-dir", "/var/lib/skiff"]
