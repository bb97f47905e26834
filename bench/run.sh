#!/usr/bin/env bash
# Runs fusor's CPU benchmark suite and writes the report.
#
#   bash bench/run.sh BUILD_DIR
#
# BUILD_DIR is a meson build directory configured with -Dbenchmarks=enabled
# (see bench/README.md). Writes bench/results/cpu.json (Google Benchmark JSON:
# median, mean, stddev, cv of 5 repetitions, randomly interleaved), then
# bench/results/cpu.md and cpu.png through bench/report.py.
#
# Environment:
#   BENCH_FILTER=REGEX  only the benchmarks whose name matches (Google Benchmark's
#                       --benchmark_filter), e.g. 'W2/double' or 'W5'
#   FAST=1              quick check: sizes 1000,65536 and 2^20, 2 repetitions,
#                       0.1 s minimum time; results go to BUILD_DIR/bench-fast/
#                       unless BENCH_OUT is set, so the full results stay as they are
#   BENCH_SIZES=a,b,..  the array sizes of W1–W3 (default 1000,4096,65536,2^20,2^26)
#   BENCH_OUT=DIR       where to write cpu.json, cpu.md, cpu.png
#   BENCH_CPU=K         pin the run to CPU K with taskset (default: not pinned)
#   BENCH_REPETITIONS=R repetitions (default 5; FAST: 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: bash bench/run.sh BUILD_DIR}
bin=$build/bench/bench_expr
if [ ! -x "$bin" ]; then
  echo "run.sh: $bin not found; build it first:" >&2
  echo "  meson setup $build -Dbuildtype=release -Dbenchmarks=enabled -Dtests=false -Dexamples=false -Dgpu=disabled" >&2
  echo "  meson compile -C $build" >&2
  exit 1
fi

reps=${BENCH_REPETITIONS:-5}
extra=()
if [ "${FAST:-0}" = 1 ]; then
  reps=${BENCH_REPETITIONS:-2}
  export BENCH_SIZES=${BENCH_SIZES:-1000,65536,1048576}
  extra+=(--benchmark_min_time=0.1)
  out=${BENCH_OUT:-$build/bench-fast}
else
  out=${BENCH_OUT:-$root/bench/results}
fi
mkdir -p "$out"
json=$out/cpu.json

pin=()
if [ -n "${BENCH_CPU:-}" ] && command -v taskset >/dev/null; then
  pin=(taskset -c "$BENCH_CPU")
fi

# A python that has matplotlib for the plot (Debian's python3-matplotlib lives
# with /usr/bin/python3; a python3 earlier on PATH may lack it).
python=python3
if ! python3 -c 'import matplotlib' 2>/dev/null && [ -x /usr/bin/python3 ]; then
  python=/usr/bin/python3
fi

read -r l1 l5 l15 _ < /proc/loadavg || true
echo "run.sh: load average $l1 $l5 $l15 on $(nproc) CPUs" >&2
if awk -v l="$l1" 'BEGIN { exit !(l > 0.5) }'; then
  echo "run.sh: warning: the machine is busy (load $l1); timings will be noisy (see the ‡ marks in cpu.md)" >&2
fi

args=(
  --benchmark_repetitions="$reps"
  --benchmark_enable_random_interleaving=true
  --benchmark_report_aggregates_only=true
  --benchmark_out="$json"
  --benchmark_out_format=json
)
if [ -n "${BENCH_FILTER:-}" ]; then
  args+=(--benchmark_filter="$BENCH_FILTER")
fi

echo "run.sh: ${pin[*]} $bin ${args[*]} ${extra[*]}" >&2
"${pin[@]}" "$bin" "${args[@]}" "${extra[@]}"

"$python" "$root/bench/report.py" --json "$json" --md "$out/cpu.md" --png "$out/cpu.png"
