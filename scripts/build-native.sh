#!/usr/bin/env bash
# Compiles the native helpers into build/. Idempotent: skips what is newer than its source.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
cc="${CC:-gcc}"
tmps=()
trap 'rm -f "${tmps[@]}"' EXIT

# A program, linked statically where the C library allows it: no dynamic loader at start-up saves
# ~0.4 ms per launch (a plain dynamic build works just as well). Skipped when newer than its source;
# renamed into place, so a concurrent run never sees a half-written binary.
build_exe() {
  local src=$1 out=$2 f fresh=1
  # newer than its source and the sources that includes (skiff-shim.c includes skiff-pyfork.c)
  for f in "$src" "${@:3}"; do [[ -x "$out" && "$out" -nt "$f" ]] || fresh=; done
  [[ -n $fresh ]] && return 0
  local tmp="$out.tmp.$$" static=-static
  tmps+=("$tmp")
  echo 'int main(void) { return 0; }' | "$cc" -static -x c -o "$tmp" - 2>/dev/null || static=
  "$cc" -O2 -Wall -Wextra $static -o "$tmp" "$src"
  mv -f "$tmp" "$out"
  echo "built $out"
}

# The container monitor.
build_exe native/skiff-shim.c build/skiff-shim native/skiff-pyfork.c

# What starts the monitors, so that the server never forks itself.
build_exe native/skiff-spawner.c build/skiff-spawner

# The LD_PRELOAD library that narrows a Pod's wildcard binds to its Pod IP (see the source).
src=native/skiff-net.c
out=build/skiff-net.so
if ! [[ -f "$out" && "$out" -nt "$src" ]]; then
  tmp="$out.tmp.$$"
  tmps+=("$tmp")
  "$cc" -O2 -Wall -Wextra -shared -fPIC -o "$tmp" "$src" -ldl -pthread
  # Renamed, never rewritten in place: running processes have the old file mapped.
  mv -f "$tmp" "$out"
  echo "built $out"
fi

# The client that starts lightweight Python components from a warm, forked interpreter.
build_exe native/skiff-pyfork.c build/skiff-pyfork
