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
checks=
# what runs in the background stops with this script
cleanup() {
  if [ -n "$k8s_build" ]; then kill -- -"$k8s_build" 2>/dev/null || kill "$k8s_build" 2>/dev/null || true; fi
  if [ -n "$checks" ]; then kill -- -"$checks" 2>/dev/null || kill "$checks" 2>/dev/null || true; fi
}
trap cleanup EXIT
if [ "${SKIFF_KUBERNETES:-1}" != 0 ] && { [ -x /usr/local/go/bin/go ] || command -v go >/dev/null 2>&1; } \
    && ! bash scripts/kubernetes.sh --check; then
  mkdir -p build
  echo "[test] building the Kubernetes control plane beside the other tests (log: build/kubernetes-build.log)"
  setsid nice -n 10 bash scripts/kubernetes.sh > build/kubernetes-build.log 2>&1 &
  k8s_build=$!
fi
# Lint, the layer map (no import cycles, no import from a layer above: .dependency-cruiser.cjs) and the
# dashboard's pure parts in vitest (graph from spec and state, renderers, router) run beside the test
# files rather than before them (about a minute); their verdict is read once the files have run
mkdir -p build
echo "[test] lint, layer map and web units beside the test files (log: build/checks.log)"
setsid bash -c 'set -e
  echo "[test] lint"; npx eslint src test bench web/src
  echo "[test] layer map"; npx depcruise src --config .dependency-cruiser.cjs --output-type err
  echo "[test] web units"; npx vitest run --root web --reporter=dot' > build/checks.log 2>&1 &
checks=$!
checks_verdict() {
  if ! wait "$checks"; then
    cat build/checks.log
    echo "[test] lint, the layer map or the web units failed (above; build/checks.log)" >&2
    exit 1
  fi
  checks=
  echo "[test] lint, layer map and web units passed (build/checks.log):"
  grep -E "problems?|warnings?|Test Files|Tests " build/checks.log | sed 's/^/  /' || true
}
# bench/ has unit tests of its own (bench/tuning's problems and scoring)
mapfile -t all < <(find dist/src dist/test dist/bench -name '*.test.js' | sort)
# the longest files start first, so that none of them is left running alone at the end (measured on
# this machine's 2 cores: 40-100 s each; the rest take under 40 s)
slow=(ui-run-graph kubernetes-node conformance kfp-conformance training-tensorflow kubernetes-ha serving
  kubernetes-launcher kubernetes-in-pod kubernetes-conformance training tuning training-paddle
  serving-tensorflow kubernetes-ddp kubernetes-katib)
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
suite=0
node --test --test-concurrency="${SKIFF_TEST_CONCURRENCY:-3}" --test-timeout=600000 "${files[@]}" || suite=$?
checks_verdict
[ "$suite" = 0 ] || exit "$suite"
if [ -n "$k8s_build" ]; then
  echo "[test] waiting for the Kubernetes control plane's build"
  if ! wait "$k8s_build"; then
    tail -n 30 build/kubernetes-build.log
    echo "[test] the Kubernetes control plane did not build (above; build/kubernetes-build.log)" >&2
    exit 1
  fi
  k8s_build=
  tail -n 1 build/kubernetes-build.log
  node --test --test-concurrency="${SKIFF_TEST_CONCURRENCY:-3}" --test-timeout=600000 "${cluster[@]}"
fi
