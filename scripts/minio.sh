#!/usr/bin/env bash
# Builds MinIO (an S3 server) from the Go module proxy for the S3 artifact tests, into a cache outside the
# repository: ${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}/bin/minio. Idempotent: nothing to do when the
# binary is there. Needs Go >= 1.25 (/usr/local/go/bin/go or go on PATH). A cold build takes minutes.
# Run by `SKIFF_S3=1 scripts/setup.sh`, or by hand; prints the binary's path.
set -euo pipefail
R=${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}
# what github.com/minio/minio@latest resolved to; pinned so every machine tests the same server
MINIO=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
bin=$R/bin/minio
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
go=/usr/local/go/bin/go
[ -x "$go" ] || go=$(command -v go || true)
if [ -z "$go" ]; then echo "minio.sh: Go is needed to build MinIO (https://go.dev/dl/)" >&2; exit 1; fi
mkdir -p "$R/bin"
# its own module and build caches beside the binary, so the build neither needs nor fills ~/go
export GOPATH=${GOPATH_DIR:-$R/gopath} GOCACHE=${GOCACHE_DIR:-$R/gocache} GOFLAGS=-modcacherw CGO_ENABLED=0
start=$(date +%s)
# into a temporary GOBIN first: an interrupted build leaves no half-written binary where the tests look
tmp=$(mktemp -d "$R/bin/.minio-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOBIN=$tmp nice -n 10 "$go" install -trimpath -ldflags "-s -w" "github.com/minio/minio@$MINIO"
mv "$tmp/minio" "$bin"
echo "minio.sh: built MinIO in $(( $(date +%s) - start ))s" >&2
echo "$bin"
