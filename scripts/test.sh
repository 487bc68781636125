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
mapfile -t files < <(find dist/src dist/test dist/bench -name '*.test.js' | sort)
echo "[test] ${#files[@]} test files"
# e2e tests start real servers and processes: two at a time suits a 2-core machine
node --test --test-concurrency=2 --test-timeout=300000 "${files[@]}"
