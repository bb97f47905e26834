#!/usr/bin/env bash
# One SGD training step in fusor next to PyTensor (C VM, Numba) and JAX.
#
#   bash bench/peers/run.sh [BUILD_DIR] [peers.py options...]
#
# BUILD_DIR (default build-peers) holds everything: the virtual environment
# (venv/, with bench/peers/requirements.txt), the meson release build with the
# benchmarks, the data (data/) and the results (peers.json). Extra options go to
# peers.py, e.g. --rounds 3 --calls 50, --models lr, --reuse-data, --skip-fusor.
# The project's build and tests never need any of this.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="build-peers"
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
  build=$1
  shift
fi
# Absolute, since meson must run from the source root.
mkdir -p "$build"
build=$(cd "$build" && pwd)
cd "$root"

req=bench/peers/requirements.txt
venv=$build/venv
py=$venv/bin/python

# --- Python environment
if [ ! -x "$py" ]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "run.sh: python3 cannot make a virtual environment; install Debian's python3-venv (apt-get install python3-venv)" >&2
    exit 1
  fi
  echo "run.sh: creating $venv" >&2
  python3 -m venv "$venv"
fi
# A copy of the requirements installed last: pip runs again only when they change.
stamp=$venv/.peers-requirements
if ! cmp -s "$req" "$stamp"; then
  echo "run.sh: installing $req" >&2
  "$py" -m pip install --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
fi

# --- the C++ program (not built when --skip-fusor asks for the Python peers alone)
skip=()
for a in "$@"; do
  if [ "$a" = --skip-fusor ]; then skip=(--skip-fusor); fi
done
if [ ${#skip[@]} -eq 0 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    echo "run.sh: configuring $build" >&2
    meson setup "$build" -Dbuildtype=release -Dbenchmarks=enabled -Dtests=false -Dexamples=false -Dgpu=disabled
  fi
  # Regenerates build.ninja first when a meson.build changed since the setup,
  # so that a target added since then is known to the query.
  ninja -C "$build" build.ninja >/dev/null
  if ninja -C "$build" -t query bench/bench_peers >/dev/null 2>&1; then
    ninja -C "$build" bench/bench_peers
  else
    echo "run.sh: $build has no target bench/bench_peers (bench/bench_peers.cpp not in the meson build yet, or the build configured without -Dbenchmarks=enabled): running the Python peers only (--skip-fusor)" >&2
    skip=(--skip-fusor)
  fi
fi

# --- the run, on one thread everywhere (peers.py sets these too, before it
# imports anything, and hands them to bench_peers)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

read -r l1 _ < /proc/loadavg || true
if awk -v l="${l1:-0}" 'BEGIN { exit !(l > 0.5) }'; then
  echo "run.sh: warning: the machine is busy (load average $l1); timings will be noisy" >&2
fi

"$py" bench/peers/peers.py --bench-bin "$build/bench/bench_peers" --data-dir "$build/data" "${skip[@]}" "$@"
