#!/usr/bin/env bash
# Builds skiff-launcher (launcher/, a static Go binary): KFP's launcher inside a task Pod on a
# Kubernetes cluster with an S3 pipeline root. An init container copies it into the Pod and it wraps
# the component's command (downloads the inputs, runs the command, uploads the outputs). Built with the
# installed Go toolchain into the cache the other test binaries live in:
#   ${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}/bin/skiff-launcher
# Its version is a hash of the files under launcher/, so the binary is rebuilt only when they changed:
# seconds cold when the module cache has minio-go, nothing at all when the binary is current.
# Usage: bash scripts/launcher.sh [--check]   (--check: exit 0 when the binary is current, 1 when not;
# builds nothing)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
home=${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}
bin=$home/bin/skiff-launcher

say() { printf '\033[1m[launcher]\033[0m %s\n' "$*"; }

# the sources' hash: every file under launcher/ (its path and content), independent of git
hash=$(cd "$repo" && find launcher -type f | LC_ALL=C sort | while IFS= read -r f; do
  printf '%s %s\n' "$(sha256sum < "$f" | cut -d' ' -f1)" "$f"
done | sha256sum | cut -c1-20)

# current when its --version names this hash (grep reads all of it, so no SIGPIPE under pipefail)
current() { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -x "skiff-launcher $hash" >/dev/null; }

if [ "${1:-}" = --check ]; then
  current && exit 0 || exit 1
fi
if current; then
  say "skiff-launcher $hash is current in $bin"
  exit 0
fi

PATH=$PATH:/usr/local/go/bin
if ! command -v go >/dev/null 2>&1; then
  say "error: Go (>= 1.24) is needed to build skiff-launcher; install it at /usr/local/go" >&2
  exit 1
fi
# the module and build caches are the control plane's (scripts/kubernetes.sh), beside the binaries
export GOMODCACHE=${SKIFF_K8S_GOMODCACHE:-$home/gomod} GOCACHE=${SKIFF_K8S_GOCACHE:-$home/gocache}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$(dirname "$bin")"
start=$(date +%s)
say "building skiff-launcher $hash"
tmp=$bin.partial-$$
trap 'rm -f "$tmp"' EXIT
(cd "$repo/launcher" && go build -trimpath -ldflags "-s -w -X main.version=$hash" -o "$tmp" .)
mv -f "$tmp" "$bin"
current || { say "error: the built $bin does not report version $hash" >&2; exit 1; }
say "built skiff-launcher $hash in $(( $(date +%s) - start ))s: $bin ($(stat -c %s "$bin") bytes)"
