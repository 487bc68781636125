#!/usr/bin/env bash
# Installs everything Skiff needs on this machine and builds it. Idempotent: quick the second time.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# Debian packages: bubblewrap gives Pods real bind mounts, their own PID namespace and hostname.
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
# a virtualenv from Debian's python3 (so Debian's python3-* packages stay visible) needs its venv module
[ -x /usr/bin/python3 ] || need_apt+=(python3)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
# distributed training (examples/training): Debian's CPU torch, Open MPI with mpi4py, nsenter for `skiff exec`
has_module() { /usr/bin/python3 -c "import importlib.util as u, sys; sys.exit(0 if u.find_spec('$1') else 1)" >/dev/null 2>&1; }
has_module torch || need_apt+=(python3-torch)
has_module mpi4py || need_apt+=(python3-mpi4py)
{ command -v mpirun >/dev/null 2>&1 && command -v orted >/dev/null 2>&1; } || need_apt+=(openmpi-bin)
command -v nsenter >/dev/null 2>&1 || need_apt+=(util-linux)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
# tenancy isolates Pods: network namespaces and veths (iproute2), NetworkPolicies in the kernel (nftables)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v nft >/dev/null 2>&1 || need_apt+=(nftables)
# the dashboard's end-to-end tests drive a real browser (playwright-core, no browser download)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian packages: ${need_apt[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    say "installing Debian packages with sudo: ${need_apt[*]}"
    sudo apt-get update -qq >/dev/null
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    say "warning: please install ${need_apt[*]} (not root and no sudo)"
  fi
fi

# npm packages. better-sqlite3 compiles from source when no prebuilt binary can be fetched; node-gyp
# then needs the headers of the running node, which Debian-style installs keep under the node prefix.
node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
nodedir_env=()
if [ -f "$node_prefix/include/node/node.h" ]; then nodedir_env=(env "npm_config_nodedir=$node_prefix"); fi
stamp=node_modules/.skiff-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || { [ -f package-lock.json ] && [ package-lock.json -nt "$stamp" ]; }; then
  say "installing npm packages"
  # onnxruntime-node ships its CPU binaries; skip its install script, which would fetch CUDA extras Skiff does not use
  export ONNXRUNTIME_NODE_INSTALL=skip
  if [ -f package-lock.json ]; then "${nodedir_env[@]}" npm ci --no-audit --no-fund --loglevel=error; else "${nodedir_env[@]}" npm install --no-audit --no-fund --loglevel=error; fi
  touch "$stamp"
fi
if ! node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1; then
  say "building better-sqlite3 from source"
  "${nodedir_env[@]}" npm rebuild better-sqlite3 --loglevel=error
  node -e "new (require('better-sqlite3'))(':memory:').close()"
fi

# the container monitor, in C (like conmon): keeps containers alive and logged across server restarts
bash scripts/build-native.sh

# python_env DIR WHAT REQUIREMENTS [--system-site-packages]: a virtualenv made once, and its
# requirements installed when the file is newer than the last install
python_env() {
  local dir=$1 what=$2 req=$3 flags=${4:-}
  if [ ! -x "$dir/bin/python" ]; then
    say "creating $what ($dir)"
    /usr/bin/python3 -m venv $flags "$dir"
  fi
  if [ ! -f "$dir/.skiff-installed" ] || [ "$req" -nt "$dir/.skiff-installed" ]; then
    say "installing $what: $(grep -v '^#' "$req" | tr '\n' ' ')"
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    touch "$dir/.skiff-installed"
  fi
}

# The Python environments are independent of one another: the ones of their own are made in the
# background while the default one is (a fresh clone makes all of them: about half the time); each
# one's output goes to the terminal as it comes, and a failure stops the setup, naming it
py_jobs=()
py_names=()
in_background() { local name=$1; shift; "$@" & py_jobs+=($!); py_names+=("$name"); }
katib_into() {
  local venv=$1
  [ -f "$venv/.skiff-installed-katib" ] || { say "installing kubeflow-katib into $venv"; "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps kubeflow-katib==0.19.0 kubeflow-training==1.9.4 && touch "$venv/.skiff-installed-katib"; }
}

# PaddlePaddle's images (paddlepaddle/paddle, registry.baidubce.com/paddlepaddle/paddle): the CPU build of
# paddlepaddle from PyPI in an environment of its own (about 1.1 GB; it brings its own numpy and
# protobuf, which the default environment's kfp and Debian's torch must not see)
in_background .venv-paddle python_env .venv-paddle "PaddlePaddle's Python environment" python/requirements-paddle.txt

# the clients users drive Skiff with (kubectl, the Python kubernetes client, the Kubeflow SDKs), at
# current versions, in their own environment: kfp in .venv pins kubernetes<31; Katib's SDK (KatibClient
# for users, report_metrics inside trials) without its pins (see requirements-tuning.txt)
clients_env() {
  python_env .venv-clients "the clients' Python environment" python/requirements-clients.txt --system-site-packages
  katib_into .venv-clients
}
in_background .venv-clients clients_env
# TensorFlow (tensorflow-cpu, with scikit-learn for the examples' data) in its own environment, without
# the system's packages: it pins numpy and protobuf versions the default environment's kfp and Debian's
# torch do not share. Images such as tensorflow/tensorflow:* run in it (src/server/builtin-images.ts).
# About 1.7 GB; SKIFF_TENSORFLOW=0 leaves it out (TFJobs then run in the default environment).
if [ "${SKIFF_TENSORFLOW:-1}" != 0 ]; then
  in_background .venv-tensorflow python_env .venv-tensorflow "TensorFlow's Python environment" python/requirements-tensorflow.txt
fi

# Python: the default environment of images (python/requirements.txt: the kfp SDK, for pipelines)
if [ ! -x .venv/bin/python ]; then
  say "creating the Python environment (.venv)"
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
for req in python/requirements.txt python/requirements-training.txt python/requirements-bert.txt python/requirements-serving.txt python/requirements-jax.txt python/requirements-tuning.txt; do
  stamp=.venv/.skiff-installed${req#python/requirements}; stamp=${stamp%.txt}
  if [ ! -f "$stamp" ] || [ "$req" -nt "$stamp" ]; then
    say "installing Python packages: $(grep -v '^#' "$req" | tr '\n' ' ')"
    .venv/bin/pip install --quiet --disable-pip-version-check -r "$req"
    touch "$stamp"
  fi
done
katib_into .venv

# the Kubeflow notebook images (jupyter-scipy, jupyter-pytorch, ...): JupyterLab in its own environment,
# made with --system-site-packages so Debian's torch is there and `pip install --user` lands in the
# notebook's home; the default environment's packages (the scipy stack, kfp) come after its own
python_env .venv-notebooks "the notebooks' Python environment" python/requirements-notebooks.txt --system-site-packages
nb_site=$(.venv-notebooks/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
default_site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ "$(cat "$nb_site/skiff-default-env.pth" 2>/dev/null)" = "$default_site" ] || echo "$default_site" > "$nb_site/skiff-default-env.pth"

for i in "${!py_jobs[@]}"; do
  if ! wait "${py_jobs[$i]}"; then
    say "error: ${py_names[$i]} could not be made (its pip output is above)" >&2
    exit 1
  fi
done

# Debian's torchrun (torch 1.13) cannot start on Python 3.11; the environment's own fixes that
[ "$(readlink .venv/bin/torchrun 2>/dev/null)" = ../../python/torchrun ] || ln -sf ../../python/torchrun .venv/bin/torchrun
# Skiff's model server, as model-server Pods start it
[ "$(readlink .venv/bin/skiff-model-server 2>/dev/null)" = ../../python/skiff-model-server ] || ln -sf ../../python/skiff-model-server .venv/bin/skiff-model-server

# images such as python:3.11 run in the machine's Python; manifests often say `python`, so the default
# environment gets a `python` when the machine only has `python3`
mkdir -p build/bin
if ! command -v python >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then ln -sf "$(command -v python3)" build/bin/python; fi

# MinIO, for the S3 artifact tests only (a Go build of several minutes, cached outside the repository):
# SKIFF_S3=1 asks for it; without it those tests are skipped and say how to build it
if [ "${SKIFF_S3:-0}" = 1 ]; then
  say "building MinIO for the S3 tests (scripts/minio.sh)"
  bash scripts/minio.sh >/dev/null
fi

# TypeScript
# a fresh build when a source changed, or when one was added, moved or removed (no stale output is left)
sources=$(find src test bench -name '*.ts' | sort | md5sum | cut -d' ' -f1)
if [ ! -f dist/.built ] || [ "$(cat dist/.built)" != "$sources" ] || [ -n "$(find src test bench tsconfig.json package.json -newer dist/.built -type f 2>/dev/null | head -n 1)" ]; then
  say "compiling TypeScript"
  rm -rf dist
  npx tsc -p tsconfig.json
  echo "$sources" > dist/.built
fi
# the dashboard (web/): type-checked, then bundled by Vite into build/web (served by `skiff up` at /ui/)
web_sum=$( { find web src/api -type f \( -name '*.ts' -o -name '*.tsx' -o -name '*.css' -o -name '*.html' -o -name '*.json' \) -not -name '*.test.ts' -not -name '*.test.tsx' -not -path '*/node_modules/*' | sort | xargs md5sum; md5sum package-lock.json; } | md5sum | cut -d' ' -f1)
if [ ! -f build/web/.built ] || [ "$(cat build/web/.built)" != "$web_sum" ]; then
  say "building the dashboard"
  npx tsc -p web/tsconfig.json
  npx vite build web --logLevel warn
  echo "$web_sum" > build/web/.built
fi
# Kubernetes' control plane (kube-apiserver, scheduler, controller-manager, etcd, and kwok for simulated Nodes) for `skiff up --kubeconfig`'s
# tests, built from source into ${SKIFF_K8S_HOME:-~/.cache/skiff-k8s}: 10-20 minutes the first time on two
# cores, so only when asked (SKIFF_KUBERNETES=1); the tests that need it skip, saying so, without it
if [ "${SKIFF_KUBERNETES:-0}" = 1 ]; then
  bash scripts/kubernetes.sh
fi
say "ready"
