#!/usr/bin/env bash
# Compiles the native helpers into build/. Idempotent: skips when the binary is newer than its source.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
src=native/skiff-shim.c
out=build/skiff-shim
if [[ -x "$out" && "$out" -nt "$src" ]]; then
  exit 0
fi
cc="${CC:-gcc}"
# Build to a temp name and rename, so a concurrent run never sees a half-written binary.
"$cc" -O2 -Wall -Wextra -o "$out.tmp.$$" "$src"
mv -f "$out.tmp.$$" "$out"
echo "built $out"
