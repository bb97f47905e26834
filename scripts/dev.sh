#!/usr/bin/env bash
# fusor's one entry point for people and CI.
#
#   ./scripts/dev.sh tour    install what is missing, build, run the examples tour
#   ./scripts/dev.sh test    install what is missing, build, run the whole test suite (build-test/)
#   ./scripts/dev.sh asan    the same tests under AddressSanitizer + UBSan, built by clang (build-asan/)
#   ./scripts/dev.sh tsan    the concurrency tests under ThreadSanitizer (build-tsan/)
#   ./scripts/dev.sh fuzz    the .npy/.npz loader fuzzers, built with clang, for
#                            FUSOR_FUZZ_SECONDS each (default 60) (build-fuzz/)
#   ./scripts/dev.sh bench   build the benchmarks, check every CPU benchmark's values (a
#                            wrong one stops it), then time them and write bench/results/
#   ./scripts/dev.sh difftest [N [OPTIONS]]  N random programs (default 400) against
#                            NumPy, the memory model checked after every call
#                            (build-difftest/); OPTIONS go to test/difftest/campaign.py
#                            (--grad-every 1 --hessian-share 1: every program a
#                            gradient, a second derivative wherever one compiles)
#
# Every dependency is a Debian package; they are installed with apt-get when
# this runs as root (or with password-less sudo), otherwise the script stops
# and names the packages to install.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# What building fusor and its examples needs: the tour installs only these.
# On a fresh machine the other packages below are most of the installation's
# time (graphviz and matplotlib alone bring dozens of packages), and the
# tour's first command is meant to show fusor in about two minutes.
build_packages=(meson ninja-build pkgconf g++ libxtensor-dev libxsimd-dev xtl-dev libzip-dev libopenblas-dev)

# What the tests, the benchmarks and the docs' checks need besides.
# python3-numpy: the NumPy interoperability and differential tests; cmake:
# the install test also builds a CMake project against the installed fusor
# (test/consumer/); graphviz: dot, which draws plan pictures. (matplotlib,
# for the benchmarks' plots, only where they run: `bench` below. It brings
# about twenty packages, which the test command would install for nothing.)
packages=("${build_packages[@]}" python3 python3-numpy doctest-dev
          libbenchmark-dev libeigen3-dev cmake graphviz)

# The multi-process tests' MPI (fusor/mpi.hpp is optional: a build without
# it skips them, saying so).
mpi_packages=(libopenmpi-dev openmpi-bin)

# install_deps [extra packages...]: the common packages plus a mode's own.
install_deps() {
  install_packages "${packages[@]}" "$@"
}

# install_packages PACKAGE...: those of them not installed yet.
install_packages() {
  local wanted=("$@")
  if ! command -v dpkg-query >/dev/null; then
    echo "dev.sh: no dpkg here; install the equivalents of: ${wanted[*]}" >&2
    return 0
  fi
  local missing=()
  for p in "${wanted[@]}"; do
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

# What nvcc makes of fusor's kernels here (meson option gpu_code): device code
# where a GPU answers, else a check that they compile (src/meson.build).
gpu_code_here() {
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then echo device; else echo check; fi
}

# build DIR [targets...]: ninja, and once more if it fails. GCC 12 has judged a
# satisfied C++20 constraint unsatisfied in about one build of a few dozen
# (different files each time, never reproducible by compiling the file again);
# fusor's concepts are now single traits, which should avoid it. A real error
# fails the second time too; a failure that vanishes is reported, not hidden.
#
# One compiler per core (FUSOR_BUILD_JOBS overrides): ninja's default, cores
# + 2, runs four template-heavy units at once on a 2-vCPU machine, and memory,
# not time, bounds these builds (a gradient test unit takes up to 8.5 GB at -O0
# with ASan).
build_jobs=${FUSOR_BUILD_JOBS:-$jobs}
build() {
  local dir=$1
  shift
  # ninja, not meson compile: it regenerates a stale build.ninja before looking up the targets.
  if ! ninja -C "$dir" -j "$build_jobs" "$@"; then
    echo "dev.sh: the build in $dir failed; building once more to tell a compiler fluke from an error" >&2
    if ! ninja -C "$dir" -j "$build_jobs" "$@"; then
      echo "dev.sh: the build in $dir failed twice: a real error" >&2
      exit 1
    fi
    echo "dev.sh: WARNING: the second build succeeded: the first failure was not reproducible" >&2
  fi
}

# check_benchmarks DIR: every CPU benchmark built in DIR run once, with a minimal
# timing. Each compares its result with a reference before it times anything and
# reports a wrong one as an error row ("ERROR OCCURRED"), which is easy to miss
# in a long table: one stops this command. (A wrong border in a stencil's
# `fusor::assign` went unnoticed that way for ten days.)
check_benchmarks() {
  local dir=$1 failed=0 out b
  for b in bench_expr bench_function bench_grad bench_language bench_select bench_stencil; do
    [ -x "$dir/bench/$b" ] || continue
    echo "dev.sh: checking the values of $b"
    if ! out=$("$dir/bench/$b" --benchmark_min_time=0.001 2>&1); then
      echo "$out" | tail -n 20
      echo "dev.sh: $b failed" >&2
      failed=1
    fi
    if grep "ERROR OCCURRED" <<<"$out"; then
      echo "dev.sh: $b reports wrong values (above)" >&2
      failed=1
    fi
  done
  return $failed
}

# run_tests DIR [meson test options...]
run_tests() {
  local dir=$1
  shift
  local rc=0
  meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "$@" || rc=$?
  python3 scripts/count_tests.py "$dir"
  return $rc
}

case "${1:-}" in
  tour)
    install_packages "${build_packages[@]}"
    # The examples with fusor's run-time half compiled once (libfusor): each
    # example unit then compiles only its own expressions.
    # Where no GPU answers, the tour builds without CUDA (-Dgpu=disabled): the
    # device walkthrough shows the emulated device, as it would anyway, and
    # the tour does not wait for nvcc to check kernels it cannot run (80 s of
    # compilation: the walkthrough's kernels, fusor's CUDA runtime, the probe).
    # Checking that the CUDA parts compile is the test command's job.
    # No debug information (the tour runs the examples; a debugging session
    # reconfigures with -Ddebug=true): libfusor, then the longest unit,
    # compiled in 45 s instead of 62 s.
    if [ "$(gpu_code_here)" = device ]; then
      gpu_options=(-Dgpu=auto -Dgpu_code=device)
    else
      echo "dev.sh tour: no GPU answers here; building the examples without CUDA (the device walkthrough" \
        "runs on the emulated device; ./scripts/dev.sh test checks that the CUDA parts compile)"
      gpu_options=(-Dgpu=disabled)
    fi
    configure build -Dbenchmarks=disabled -Dtests=false -Druntime=compiled "${gpu_options[@]}" -Ddebug=false
    build build
    for example in walkthrough logistic_regression jacobi mlp walkthrough_device; do
      if [ -x "build/examples/$example" ]; then
        echo "=================== examples/$example"
        "build/examples/$example"
      fi
    done
    # Data-parallel training and the distributed stencil on two processes, where MPI is installed
    # (apt-get install libopenmpi-dev openmpi-bin; the test command installs it).
    for example in data_parallel distributed_jacobi; do
      if [ -x "build/examples/$example" ] && command -v mpirun >/dev/null; then
        echo "=================== examples/$example (mpirun -np 2)"
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
          mpirun -np 2 "build/examples/$example"
      fi
    done
    ;;
  test)
    # -O0: expression templates compile about twice as fast as at -O2 and
    # 6-16 % faster than at -Og, 11 % over six groups (most of a unit's time
    # is generating code for many small functions, which -Og optimises and
    # -O0 does not), and
    # every code path, the xsimd loops at the machine's widest vectors
    # included, still runs. (g++ 12's unoptimised AVX-512BW blends are
    # macros xsimd's batches do not fit; backend/cpu/unoptimised_blends.hpp
    # replaces them, and the test unoptimised_avx512 checks it on every
    # machine.)
    install_deps "${mpi_packages[@]}"
    # In the compiled-runtime mode (libfusor, FUSOR_SEPARATE_COMPILATION); the
    # asan run below builds the same suite header-only, as fusor is used by
    # default, so both modes run every test. This way round because g++
    # compiles the planner and its company again in every unit that includes
    # them header-only (4-6 s more per unit here, the precompiled header
    # notwithstanding), where clang compiles them once per build, into the
    # precompiled header's own object (-fpch-codegen; test/pch/test_pch.hpp):
    # there header-only costs a unit no more than the compiled mode. (The GPU
    # suite's nvcc units use libfusor either way, gpu/meson.build.)
    # -g1 (line tables: a backtrace names files and lines, a debugger steps by
    # line; no variables): full -g made the units that keep debug
    # information 1.4x slower to compile and 2.4x larger, and this is the build
    # CI and every contributor waits for. For a debugging session:
    # meson configure build-test -Dcpp_args=-g, then ninja -C build-test.
    # Where nvcc is installed the CUDA parts are built too; where no GPU
    # answers, they can only be checked to compile, so nvcc makes PTX from
    # unoptimised device code (-Dgpu_code=check, src/meson.build) and the GPU
    # tests skip, saying why.
    # -Dtest_pch=enabled: the headers the units share are precompiled once
    # per build (test/meson.build); a unit that cannot use them stops the
    # build instead of quietly parsing them again.
    # -Dbuildtype=custom beside -Ddebug and -Doptimization: meson warns that it
    # is redundant, but without it meson 1.0 still gives nvcc the project
    # default's -g -lineinfo (the host units' flags are the same either way).
    configure build-test -Dbuildtype=custom -Ddebug=false -Dcpp_args=-g1 -Doptimization=0 -Dbenchmarks=disabled \
      -Dexamples=false -Druntime=compiled -Dgpu_code="$(gpu_code_here)" -Dtest_pch=enabled
    build build-test
    run_tests build-test
    ;;
  asan)
    # UBSan halts at its first report (-fno-sanitize-recover=all, set by
    # meson.build for any build that sanitizes 'undefined'); the canaries of
    # test/canary fail the run if it does not. -O0 for the baseline ISA: the
    # sanitizers see every access (nothing optimised away), the build takes
    # about half the time of -Og with -march=native, and the SSE2 code paths
    # get checked too (the test build runs the machine's widest vectors).
    # Header-only (the test build above is the compiled-runtime mode's run):
    # clang's precompiled header compiles the run-time half once for the
    # units that use it; the few that cannot (FUSOR_CHECKED, a replaced
    # operator new, the two-unit device test) compile it each, 7-14 s more
    # than in the compiled mode. Line tables only (-g1): a report still names
    # every frame's file and line.
    # clang, not g++: the suite instrumented by clang 14 compiles in about half
    # of g++ 12's time (g++ instruments every member call of every expression
    # node with UBSan's null and alignment checks, a third of a unit's time),
    # and the test build already checks g++. (The fuzz run is clang's too.)
    install_deps clang libclang-rt-dev "${mpi_packages[@]}"
    if [ -f build-asan/compile_commands.json ] && ! grep -q '"command": "clang++' build-asan/compile_commands.json; then
      rm -rf build-asan  # configured with another compiler, which meson keeps
    fi
    CXX=clang++ configure build-asan -Dbuildtype=custom -Ddebug=false -Dcpp_args=-g1 -Doptimization=0 -Dnative=false \
      -Db_sanitize=address,undefined -Db_lundef=false -Dgpu=disabled -Dbenchmarks=disabled -Dexamples=false \
      -Druntime=header-only -Dtest_pch=enabled
    # Memory once bounded this build on a 2-vCPU, 23 GB machine (g++'s
    # gradient units took up to 8.5 GB each at -O0 with ASan); under clang the
    # test groups (test/meson.build) peak at 2.0-2.8 GB (the gradient groups)
    # and 4.9 GB (the expression and emulated-device groups), and build() runs
    # one per core.
    build build-asan
    # Every test that runs fusor's code runs here. The compile-fail tests and
    # the install check do not: they run the system compiler and meson on
    # sources, never a sanitized binary, so they would repeat exactly what the
    # test build ran (two minutes of the CI's time).
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      run_tests build-asan --no-suite compile_fail --no-suite install
    ;;
  tsan)
    # Only the concurrency tests (and the race canary): suite 'threads'.
    # Without the tests' precompiled header: for one unit it only delays it
    # (the header 25 s, then the unit 32 s, against 42 s for the unit alone).
    install_deps
    configure build-tsan -Ddebug=true -Doptimization=1 -Db_sanitize=thread -Db_lundef=false \
      -Dgpu=disabled -Dbenchmarks=disabled -Dexamples=false -Dtest_pch=disabled
    build build-tsan test/test_threads test/canary/sanitizer_canary
    rc=0
    OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      meson test -C build-tsan --no-rebuild --suite threads --print-errorlogs --num-processes "$jobs" || rc=$?
    python3 scripts/count_tests.py build-tsan
    exit $rc
    ;;
  fuzz)
    # libFuzzer is clang's: a clang build with ASan + UBSan, the harnesses of
    # test/fuzz run from the committed corpus for a bounded time each.
    install_deps clang libclang-rt-dev
    CXX=clang++ configure build-fuzz -Ddebug=true -Doptimization=1 -Db_sanitize=address,undefined \
      -Db_lundef=false -Dtests=false -Dexamples=false -Dbenchmarks=disabled -Dgpu=disabled -Dfuzz=enabled \
      -Dfuzz_seconds="${FUSOR_FUZZ_SECONDS:-60}"
    # The harnesses alone: they include the loaders' headers and link nothing
    # of libfusor, whose unit, instrumented, took two minutes of a core here.
    build build-fuzz test/fuzz/fuzz_npy test/fuzz/fuzz_npz
    rc=0
    meson test -C build-fuzz --no-rebuild --suite fuzz --print-errorlogs --num-processes "$jobs" || rc=$?
    grep -h "executions in" build-fuzz/meson-logs/testlog.txt || true
    python3 scripts/count_tests.py build-fuzz
    exit $rc
    ;;
  bench)
    install_deps python3-matplotlib
    configure build-bench -Dbuildtype=release -Dbenchmarks=enabled -Dtests=false -Dexamples=false
    build build-bench
    check_benchmarks build-bench
    bash bench/run.sh build-bench
    ;;
  difftest)
    # Random fusor programs against their NumPy twins (test/difftest/): as
    # many as asked (default 400), 40 to a compiled unit, one unit per core.
    install_deps
    numpy_python=python3
    python3 -c 'import numpy' 2>/dev/null || numpy_python=/usr/bin/python3
    "$numpy_python" test/difftest/campaign.py "${2:-400}" --jobs "$build_jobs" \
      ${FUSOR_DIFFTEST_SEED:+--first-seed "$FUSOR_DIFFTEST_SEED"} "${@:3}"
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
