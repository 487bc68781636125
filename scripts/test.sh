#!/usr/bin/env bash
# Lint, typecheck (the build) and the whole test suite: unit tests beside the code, e2e tests in test/.
set -euo pipefail
cd "$(dirname "$0")/.."
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
echo "[test] ${#files[@]} test files"
# e2e tests start real servers and processes and wait on them much of the time: three at a time keeps
# a 2-core machine busy (at two, the suite used about half of its CPU time); a file gets 10 minutes:
# the longest take 60-170 s on a quiet machine and passed 300 s at a load of 24
node --test --test-concurrency="${SKIFF_TEST_CONCURRENCY:-3}" --test-timeout=600000 "${files[@]}"
