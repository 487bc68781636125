#!/usr/bin/env bash
# Lint, typecheck (the build) and the whole test suite: unit tests beside the code, e2e tests in test/.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Kubernetes control plane for the cluster tests (test/kubernetes*.ts), MinIO for the S3 tests and
# Skiff's launcher binary are built once per machine into ~/.cache/skiff-k8s (scripts/kubernetes.sh,
# 12-15 minutes cold on two cores). When one is missing they are built beside the other tests, and the
# tests that need them run once they are there. SKIFF_KUBERNETES=0
# builds nothing (the cluster tests then skip, saying why); no Go toolchain, the same.
k8s_build=
if [ "${SKIFF_KUBERNETES:-1}" != 0 ] && { [ -x /usr/local/go/bin/go ] || command -v go >/dev/null 2>&1; } \
    && ! bash scripts/kubernetes.sh --check; then
  mkdir -p build
  echo "[test] building the Kubernetes control plane beside the other tests (log: build/kubernetes-build.log)"
  setsid nice -n 10 bash scripts/kubernetes.sh > build/kubernetes-build.log 2>&1 &
  k8s_build=$!
  trap 'kill -- -$k8s_build 2>/dev/null || kill $k8s_build 2>/dev/null || true' EXIT
fi
echo "[test] lint"
npx eslint src test bench web/src
# the layer map: no import cycles, no import from a layer above (.dependency-cruiser.cjs)
npx depcruise src --config .dependency-cruiser.cjs --output-type err
# the dashboard's pure parts (graph from spec and state, renderers, router) in vitest
echo "[test] web units"
npx vitest run --root web --reporter=dot
# bench/ has unit tests of its own (bench/tuning's problems and scoring)
mapfile -t all < <(find dist/src dist/test dist/bench -name '*.test.js' | sort)
# the longest files start first, so that none of them is left running alone at the end (measured in
# CI: 60-170 s each; the rest take under 60 s)
slow=(kubectl-conformance ui-run-graph kubernetes-conformance conformance kfp-conformance training-tensorflow
  kubernetes-node kubernetes-ha story-recommender serving training serving-tensorflow kubernetes)
files=()
for name in "${slow[@]}"; do [ -f "dist/test/$name.test.js" ] && files+=("dist/test/$name.test.js"); done
for f in "${all[@]}"; do [[ " ${files[*]} " == *" $f "* ]] || files+=("$f"); done
cluster=()
if [ -n "$k8s_build" ]; then
  # what the build makes: the control plane (test/kubernetes*), MinIO and Skiff's launcher (the files
  # that ask whether those are there)
  rest=()
  for f in "${files[@]}"; do
    if [[ $f == dist/test/kubernetes*.test.js ]] || grep -qE 'minioSkip|launcherSkip' "$f"; then cluster+=("$f"); else rest+=("$f"); fi
  done
  files=("${rest[@]}")
fi
echo "[test] ${#files[@]} test files${cluster[0]:+, then ${#cluster[@]} that need the control plane, MinIO or the launcher being built}"
# e2e tests start real servers and processes and wait on them much of the time: three at a time keeps
# a 2-core machine busy (at two, the suite used about half of its CPU time); a file gets 10 minutes:
# the longest take 60-170 s on a quiet machine and passed 300 s at a load of 24
node --test --test-concurrency="${SKIFF_TEST_CONCURRENCY:-3}" --test-timeout=600000 "${files[@]}"
if [ -n "$k8s_build" ]; then
  echo "[test] waiting for the Kubernetes control plane's build"
  if ! wait "$k8s_build"; then
    tail -n 30 build/kubernetes-build.log
    echo "[test] the Kubernetes control plane did not build (above; build/kubernetes-build.log)" >&2
    exit 1
  fi
  trap - EXIT
  tail -n 1 build/kubernetes-build.log
  node --test --test-concurrency="${SKIFF_TEST_CONCURRENCY:-3}" --test-timeout=600000 "${cluster[@]}"
fi
