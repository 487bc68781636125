#!/usr/bin/env bash
# The serving benchmark's baseline (bench/serving.ts): KServe's Python model server from PyPI in its
# own virtualenv, .venv-kserve. kserve 0.21 needs numpy >= 1.26, which the project's .venv cannot have
# (it pins numpy < 1.25 for Debian's torch), so this environment has no system site packages.
# scikit-learn is the version .venv has, so both servers load the same joblib file.
# Idempotent: quick the second time (a stamp file records what was installed). Benchmarks only; the
# test suite does not need it.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-kserve
reqs=(kserve==0.21.0 scikit-learn==1.5.2 joblib)
stamp=$venv/.skiff-bench-installed
want="${reqs[*]}"

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
say() { printf '\033[1m[setup-serving]\033[0m %s\n' "$*"; }
# the machine's Debian python3, as .venv uses: the same interpreter unpickles the model the same way
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  "$py" -m venv "$venv"
fi
say "installing ${want} into $venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${reqs[@]}"
"$venv/bin/python" -c 'import kserve, sklearn, joblib'
printf '%s' "$want" > "$stamp"
