#!/usr/bin/env bash
# Builds the Kubernetes control plane Skiff's Kubernetes tests run against: kube-apiserver,
# kube-scheduler, kube-controller-manager (from k8s.io/kubernetes), etcd (from go.etcd.io/etcd) and kwok's
# controller (sigs.k8s.io/kwok, simulated Nodes for the scale benchmark), from
# the Go module proxy with the installed Go toolchain, into a cache outside the repository:
#   ${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}/bin
# With them, the two other Go builds the tests need: Skiff's own KFP launcher for task Pods
# (scripts/launcher.sh, from launcher/) and MinIO, the S3 server of the artifact tests (scripts/minio.sh).
# Nothing ships these as packages (Debian's etcd 3.4 is too old for current client-go's watch-list), so
# they are built once per machine: about 10-20 minutes cold on two busy cores, seconds when warm, and
# nothing at all when every binary already reports the pinned version.
# Run by scripts/test.sh beside the tests when a binary is missing (SKIFF_KUBERNETES=0: not), by
# scripts/setup.sh when SKIFF_KUBERNETES=1, or directly: bash scripts/kubernetes.sh [--check]
set -euo pipefail

K8S_VERSION=${SKIFF_K8S_VERSION:-1.35.4}   # k8s.io/kubernetes; its staging modules are published as v0.35.4
ETCD_VERSION=${SKIFF_ETCD_VERSION:-3.6.16} # go.etcd.io/etcd/server/v3
KWOK_VERSION=${SKIFF_KWOK_VERSION:-0.8.0}  # sigs.k8s.io/kwok (needs Go >= 1.26)
home=${SKIFF_K8S_HOME:-$HOME/.cache/skiff-k8s}
bin=$home/bin

say() { printf '\033[1m[kubernetes]\033[0m %s\n' "$*"; }

PATH=$PATH:/usr/local/go/bin
if ! command -v go >/dev/null 2>&1; then
  say "error: Go (>= 1.25) is needed to build the control plane; install it at /usr/local/go" >&2
  exit 1
fi
# the module and build caches live beside the binaries (about 8 GB cold), so that removing $home removes all
# of it; -modcacherw keeps the module cache deletable without chmod
export GOMODCACHE=${SKIFF_K8S_GOMODCACHE:-$home/gomod} GOCACHE=${SKIFF_K8S_GOCACHE:-$home/gocache}
export GOFLAGS=-modcacherw CGO_ENABLED=0 GOTOOLCHAIN=local
mkdir -p "$bin"

# a binary is current when its --version names the pinned version (grep reads all of it: with -q it
# would stop at the first match, and under pipefail the binary's SIGPIPE on a later line fails the check)
has_version() { [ -x "$bin/$1" ] && "$bin/$1" --version 2>/dev/null | grep "$2" >/dev/null; }

# --check: exit 0 when every binary (and kwok's Stages, where Go can build kwok) is current, 1 when a
# build is needed; builds nothing
if [ "${1:-}" = --check ]; then
  for b in kube-apiserver kube-scheduler kube-controller-manager; do has_version "$b" "v$K8S_VERSION\$" || exit 1; done
  has_version etcd "etcd Version: $ETCD_VERSION\$" || exit 1
  if go version | grep -qE 'go1\.(2[6-9]|[3-9][0-9])'; then
    has_version kwok "v$KWOK_VERSION\b" && [ "$(cat "$home/kwok-stage/VERSION" 2>/dev/null)" = "$KWOK_VERSION" ] || exit 1
  fi
  [ -x "$bin/minio" ] || exit 1
  bash "$(dirname "$0")/launcher.sh" --check || exit 1
  exit 0
fi

# ---- Skiff's launcher (seconds), first: the tests of task Pods on a cluster need it ----
bash "$(dirname "$0")/launcher.sh"

# ---- kube-apiserver, kube-scheduler, kube-controller-manager ----
# k8s.io/kubernetes cannot be built with `go install pkg@version`: its go.mod replaces ~30 staging modules
# with ./staging/src/k8s.io/NAME. A wrapper module requires it and replaces each of those with the
# published k8s.io/NAME v0.MINOR.PATCH instead.
k8s_bins=(kube-apiserver kube-scheduler kube-controller-manager)
missing=()
for b in "${k8s_bins[@]}"; do has_version "$b" "v$K8S_VERSION\$" || missing+=("$b"); done
if [ ${#missing[@]} -gt 0 ]; then
  start=$(date +%s)
  staging=0.${K8S_VERSION#1.}
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  dir=$home/build/kubernetes-$K8S_VERSION
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    say "resolving k8s.io/kubernetes v$K8S_VERSION"
    go mod download k8s.io/kubernetes@v$K8S_VERSION
    upstream_mod=$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/v$K8S_VERSION.mod
    {
      printf 'module skiff.local/kubernetes-build\n\ngo 1.25.0\n\ngodebug default=go1.25\n\n'
      printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
      awk -v v="v$staging" '$2 == "=>" && $3 ~ /^\.\/staging\// { printf "\t%s => %s %s\n", $1, $1, v }' "$upstream_mod"
      printf ')\n'
    } > "$dir/go.mod"
    {
      printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for b in "${k8s_bins[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
      printf ')\n'
    } > "$dir/tools.go"
    (cd "$dir" && go mod tidy)
  fi
  # without these the binaries call themselves v0.0.0-master, which clients refuse to compare against
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  for b in "${missing[@]}"; do
    say "building $b v$K8S_VERSION"
    t=$(date +%s)
    (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$bin/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$bin/$b.tmp" "$bin/$b"
    say "built $b in $(( $(date +%s) - t ))s"
  done
  say "Kubernetes control plane built in $(( $(date +%s) - start ))s"
fi

# ---- etcd ----
# go.etcd.io/etcd/server/v3's own go.mod replaces its sibling modules with ../ paths, so it too needs a
# wrapper; the server module's root package is etcd's main.
if ! has_version etcd "etcd Version: $ETCD_VERSION\$"; then
  start=$(date +%s)
  dir=$home/build/etcd-$ETCD_VERSION
  mkdir -p "$dir"
  if [ ! -f "$dir/go.sum" ]; then
    {
      printf 'module skiff.local/etcd-build\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v%s\n\nreplace (\n' "$ETCD_VERSION"
      for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
        printf '\tgo.etcd.io/etcd/%s => go.etcd.io/etcd/%s v%s\n' "$m" "$m" "$ETCD_VERSION"
      done
      printf ')\n'
    } > "$dir/go.mod"
    printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > "$dir/tools.go"
    (cd "$dir" && go mod tidy)
  fi
  say "building etcd $ETCD_VERSION"
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$bin/etcd.tmp" "$bin/etcd"
  say "built etcd in $(( $(date +%s) - start ))s"
fi

# ---- kwok ----
# Only the controller (cmd/kwok), not kwokctl, which downloads prebuilt binaries. Its module has no replaces,
# so `go install pkg@version` works; it reports `kwok version vX.Y.Z`. The Stage definitions that drive
# simulated Nodes and Pods (node-initialize, heartbeat, pod-ready, pod-complete, ...) ship in the module's
# kustomize/stage tree, not in the binary's flags, so they are copied beside it.
if command -v go >/dev/null && go version | grep -qE 'go1\.(2[6-9]|[3-9][0-9])'; then
  if ! has_version kwok "v$KWOK_VERSION\b"; then
    start=$(date +%s)
    say "building kwok $KWOK_VERSION"
    GOBIN=$home/build/kwok-$KWOK_VERSION go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
    mv "$home/build/kwok-$KWOK_VERSION/kwok" "$bin/kwok"
    say "built kwok in $(( $(date +%s) - start ))s"
  fi
  stages=$home/kwok-stage
  if [ "$(cat "$stages/VERSION" 2>/dev/null)" != "$KWOK_VERSION" ]; then
    src=$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    rm -rf "$stages" && mkdir -p "$stages"
    cp -r "$src/kustomize/stage/." "$stages/" && chmod -R u+w "$stages"
    echo "$KWOK_VERSION" > "$stages/VERSION"
  fi
else
  say "kwok skipped: it needs Go >= 1.26 ($(go version | cut -d' ' -f3) here); the kwok tests and bench skip"
fi

# ---- MinIO (github.com/minio/minio): the S3 server of the artifact tests ----
if [ ! -x "$bin/minio" ]; then
  start=$(date +%s)
  say "building MinIO"
  bash "$(dirname "$0")/minio.sh" >/dev/null
  say "built MinIO in $(( $(date +%s) - start ))s"
fi

say "control plane ready in $bin"
