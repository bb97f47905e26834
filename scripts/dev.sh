#!/usr/bin/env bash
# fusor's one entry point for people and CI.
#
#   ./scripts/dev.sh tour    install what is missing, build, run the examples tour
#   ./scripts/dev.sh test    install what is missing, build, run the whole test suite (build-test/)
#   ./scripts/dev.sh asan    the same tests under AddressSanitizer + UBSan (build-asan/)
#   ./scripts/dev.sh bench   build and run the benchmarks, then write bench/results/
#
# Every dependency is a Debian package; they are installed with apt-get when
# this runs as root (or with password-less sudo), otherwise the script stops
# and names the packages to install.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

packages=(meson ninja-build pkgconf g++ python3 python3-numpy python3-matplotlib
          libxtensor-dev libxsimd-dev xtl-dev libzip-dev doctest-dev
          libbenchmark-dev libeigen3-dev libopenblas-dev libxtensor-blas-dev)

install_deps() {
  if ! command -v dpkg-query >/dev/null; then
    echo "dev.sh: no dpkg here; install the equivalents of: ${packages[*]}" >&2
    return 0
  fi
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      sudo=(sudo)
    else
      echo "dev.sh: fusor needs these Debian packages: ${missing[*]}" >&2
      echo "dev.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure DIR [meson options...]: set up once, reconfigure when options change.
configure() {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson configure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@"
  fi
}

jobs=$(nproc 2>/dev/null || echo 2)

run_tests() {
  local dir=$1
  local rc=0
  meson test -C "$dir" --print-errorlogs --num-processes "$jobs" || rc=$?
  python3 scripts/count_tests.py "$dir"
  return $rc
}

case "${1:-}" in
  tour)
    install_deps
    configure build -Dbenchmarks=disabled -Dtests=false
    meson compile -C build
    for example in walkthrough logistic_regression; do
      if [ -x "build/examples/$example" ]; then
        echo "=================== examples/$example"
        "build/examples/$example"
      fi
    done
    ;;
  test)
    # -Og: expression templates compile about twice as fast as at -O2, and
    # every code path (the xsimd loops included) still runs. (Not -O0: GCC
    # 12's AVX-512 intrinsics are macros without optimisation, which xsimd
    # 8.1's integer select does not compile against.)
    install_deps
    configure build-test -Dbuildtype=debug -Doptimization=g -Dbenchmarks=disabled -Dexamples=false
    meson compile -C build-test
    run_tests build-test
    ;;
  asan)
    install_deps
    configure build-asan -Dbuildtype=debug -Doptimization=g -Db_sanitize=address,undefined \
      -Db_lundef=false -Dgpu=disabled -Dbenchmarks=disabled -Dexamples=false
    meson compile -C build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      run_tests build-asan
    ;;
  bench)
    install_deps
    configure build-bench -Dbuildtype=release -Dbenchmarks=enabled -Dtests=false -Dexamples=false -Dgpu=disabled
    meson compile -C build-bench
    bash bench/run.sh build-bench
    ;;
  *)
    sed -n '2,12p' "$0"
    exit 2
    ;;
esac
