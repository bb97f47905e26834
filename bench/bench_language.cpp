// bench/bench_language.cpp — indexing by integer arrays and random numbers,
// each next to its references in the same binary.
//
// Take: a minibatch of k rows (k = 64, 1024) of a 60000 × 784 float matrix
// (MNIST's training set, 188 MB), the rows named by k fixed indices spread
// over the matrix:
//
//   fusor_function  a compiled function of the indices (an int64 vector input)
//                   with the borrowed output Out(take(X, idx, 0), borrow), X a
//                   shared variable holding the matrix
//   hand            one memcpy per row into a preallocated k × 784 buffer
//                   (no bounds check), in language_ref.cpp
//   xtensor         xt::noalias(buf) = xt::view(X, xt::keep(idx), xt::all()),
//                   buf preallocated
//
// Random: N = 2^20 and 2^24 numbers per call, uniform on [0, 1) and normal
// (0, 1), float and double:
//
//   fusor_function  a compiled function with no inputs and the borrowed output
//                   Out(rng.uniform<T>({N}), borrow) (or normal): every call
//                   draws new numbers (the stream's counter is advanced)
//   loop            a plain loop calling the generator fusor's draws call
//                   (fusor::fn::uniform_at / normal_at, Philox4x32-10) for the
//                   same indices, key and call counter, into a preallocated
//                   buffer, in language_ref.cpp. GCC vectorises it for uniform
//                   (Philox's 32 x 32 -> 64-bit multiplies in 512-bit
//                   registers); normal stays scalar (std::log and std::cos
//                   are libm calls)
//   loop_scalar     (uniform) the same loop with GCC's vectoriser off for it:
//                   one element at a time, as fusor evaluates a draw
//
// Counters:
//   BW             bytes per second, kIs1000. Take: the rows read and written,
//                  2 · k · 784 · 4 bytes per call (the indices not counted; the
//                  same k rows every call, so they are read from the cache).
//                  Random: the numbers written, N · sizeof(T) per call.
//   speed_vs_hand  time per call of the hand loop (Take: `hand`; Random:
//                  `loop`) / this benchmark's time per call (> 1: faster). The
//                  hand loop is run for the same number of calls right after
//                  this benchmark's timed loop, in the same process.
//   speed_vs_scalar (fusor, uniform) the same against loop_scalar.
//   news_per_call  global operator new calls per call.
//
// Every benchmark checks its result once before timing (Take: equal to the
// hand gather; Random: bit-equal to the plain loop). Measured, never asserted.
// Run: build-bench/bench/bench_language --benchmark_repetitions=3
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include <benchmark/benchmark.h>

#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "alloc_count.hpp"
#include "language_ref.hpp"

namespace {

using benchmark::Counter;
using benchmark::State;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t rows = 60000, cols = 784;

/// The 60000 × 784 matrix (values in [0.5, 1.5)), made once.
const xt::xtensor<float, 2>& dataset() {
  static const xt::xtensor<float, 2> x = [] {
    auto m = xt::xtensor<float, 2>::from_shape({rows, cols});
    for (std::size_t i = 0; i < rows * cols; ++i)
      m.data()[i] = 0.5f + static_cast<float>((i * 7919u) % 1000u) * 1e-3f;
    return m;
  }();
  return x;
}

/// k row indices spread over [0, rows) (a multiplicative hash of 0..k-1).
xt::xtensor<std::int64_t, 1> row_indices(std::size_t k) {
  auto idx = xt::xtensor<std::int64_t, 1>::from_shape({k});
  for (std::size_t i = 0; i < k; ++i) idx(i) = static_cast<std::int64_t>((i * 2654435761u + 12345u) % rows);
  return idx;
}

/// Seconds per call of `body` over `calls` calls.
template <class Body>
double seconds_per_call(std::int64_t calls, Body body) {
  const auto t0 = clock_type::now();
  for (std::int64_t c = 0; c < calls; ++c) {
    body(c);
    benchmark::ClobberMemory();
  }
  return std::chrono::duration<double>(clock_type::now() - t0).count() / static_cast<double>(calls);
}

/// The timed loop, then the counters: BW (bytes per call), news_per_call and,
/// when `hand` is given, speed_vs_hand (hand(c) run for the same number of
/// calls). Returns the seconds per call.
template <class Body, class Hand>
double timed(State& st, double bytes, Body body, Hand hand) {
  const std::size_t news0 = bench_operator_new_calls();
  const auto t0 = clock_type::now();
  for (auto _ : st) {
    body();
    benchmark::ClobberMemory();
  }
  const double own = std::chrono::duration<double>(clock_type::now() - t0).count();
  const std::int64_t calls = st.iterations() > 0 ? st.iterations() : 1;
  st.counters["news_per_call"] =
      Counter(static_cast<double>(bench_operator_new_calls() - news0) / static_cast<double>(calls));
  st.counters["BW"] = Counter(bytes, Counter::kIsIterationInvariantRate, Counter::kIs1000);
  if constexpr (!std::is_same_v<Hand, std::nullptr_t>)
    st.counters["speed_vs_hand"] = Counter(seconds_per_call(calls, hand) / (own / static_cast<double>(calls)));
  return own / static_cast<double>(calls);
}

bool same_floats(State& st, const float* got, const float* want, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(got + i, want + i, sizeof(float)) != 0) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "wrong result at %zu: got %.9g, expected %.9g", i, static_cast<double>(got[i]),
                    static_cast<double>(want[i]));
      st.SkipWithError(msg);
      return false;
    }
  return true;
}

// ------------------------------------------------------------------ Take

double take_bytes(std::size_t k) { return 2.0 * static_cast<double>(k * cols * sizeof(float)); }

/// The hand gather of the k rows, into its own buffer: the expected result,
/// and the loop speed_vs_hand times.
struct hand_gather {
  const xt::xtensor<float, 2>& x = dataset();
  xt::xtensor<std::int64_t, 1> idx;
  xt::xtensor<float, 2> out;
  explicit hand_gather(std::size_t k) : idx(row_indices(k)), out(xt::xtensor<float, 2>::from_shape({k, cols})) {
    run(0);
  }
  void run(std::int64_t) { lref::gather_rows(out.data(), x.data(), idx.data(), idx.size(), cols); }
};

void Take_fusor_function(State& st) {
  const auto k = static_cast<std::size_t>(st.range(0));
  hand_gather hand(k);
  auto X = fusor::shared(dataset(), "X");
  fusor::vector<std::int64_t> I{"idx"};
  auto f = fusor::function(fusor::inputs(I), fusor::outputs(fusor::Out(fusor::take(X, I, 0), fusor::borrow)));
  const auto idx = row_indices(k);
  {
    auto r = f(idx);
    if (!same_floats(st, r.data(), hand.out.data(), k * cols)) return;
  }
  timed(st, take_bytes(k), [&] { benchmark::DoNotOptimize(f(idx).data()); }, [&](std::int64_t c) { hand.run(c); });
}

void Take_hand(State& st) {
  const auto k = static_cast<std::size_t>(st.range(0));
  hand_gather hand(k);
  timed(st, take_bytes(k), [&] { hand.run(0); }, nullptr);
}

void Take_xtensor(State& st) {
  const auto k = static_cast<std::size_t>(st.range(0));
  hand_gather hand(k);
  const auto& x = dataset();
  std::vector<std::size_t> idx(k);
  for (std::size_t i = 0; i < k; ++i) idx[i] = static_cast<std::size_t>(hand.idx(i));
  auto buf = xt::xtensor<float, 2>::from_shape({k, cols});
  auto step = [&] { xt::noalias(buf) = xt::view(x, xt::keep(idx), xt::all()); };
  step();
  if (!same_floats(st, buf.data(), hand.out.data(), k * cols)) return;
  timed(st, take_bytes(k), step, [&](std::int64_t c) { hand.run(c); });
}

// ------------------------------------------------------------------ Random

constexpr std::uint64_t seed = 42;

/// The plain loop over the draw's indices, key and call counter, into its own
/// buffer; `scalar`: the copy of the loop GCC does not vectorise.
template <class T>
struct plain_loop {
  bool normal, scalar;
  std::vector<T> out;
  std::uint64_t key = fusor::detail::draw_key(seed, 0);  // the stream's first draw
  plain_loop(bool normal_, std::size_t n, bool scalar_ = false) : normal(normal_), scalar(scalar_), out(n) {}
  void run(std::int64_t call) {
    const auto c = static_cast<std::uint64_t>(call);
    if (normal) lref::normal(out.data(), out.size(), c, key, T(0), T(1));
    else if (scalar) lref::uniform_scalar(out.data(), out.size(), c, key, T(0), T(1));
    else lref::uniform(out.data(), out.size(), c, key, T(0), T(1));
  }
};

template <class T, bool Normal>
void Random_fusor_function(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  fusor::random_stream rng(seed);
  auto draw = [&] {
    if constexpr (Normal) return rng.normal<T>(fusor::dims{n}, T(0), T(1));
    else return rng.uniform<T>(fusor::dims{n}, T(0), T(1));
  }();
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(draw, fusor::borrow)));
  plain_loop<T> loop(Normal, n);
  loop.run(0);
  {
    auto r = f();  // call 0
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(r.data() + i, loop.out.data() + i, sizeof(T)) != 0) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "wrong number at %zu: got %.17g, expected %.17g", i,
                      static_cast<double>(r.data()[i]), static_cast<double>(loop.out[i]));
        st.SkipWithError(msg);
        return;
      }
  }
  const double own = timed(st, static_cast<double>(n * sizeof(T)), [&] { benchmark::DoNotOptimize(f().data()); },
                           [&](std::int64_t c) { loop.run(c + 1); });
  const std::int64_t calls = st.iterations() > 0 ? st.iterations() : 1;
  if constexpr (!Normal) {  // and against the scalar loop, for the same number of calls
    plain_loop<T> scalar(false, n, true);
    st.counters["speed_vs_scalar"] = Counter(seconds_per_call(calls, [&](std::int64_t c) { scalar.run(c + 1); }) / own);
  }
}

template <class T, bool Normal>
void Random_loop(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  plain_loop<T> loop(Normal, n);
  loop.run(0);
  std::int64_t call = 0;
  timed(st, static_cast<double>(n * sizeof(T)), [&] { loop.run(++call); }, nullptr);
}

template <class T>
void Random_loop_scalar(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  plain_loop<T> loop(false, n, true), vectorised(false, n);
  loop.run(0);
  vectorised.run(0);
  if (std::memcmp(loop.out.data(), vectorised.out.data(), n * sizeof(T)) != 0) {
    st.SkipWithError("the scalar loop and the vectorised loop differ");
    return;
  }
  std::int64_t call = 0;
  timed(st, static_cast<double>(n * sizeof(T)), [&] { loop.run(++call); },
        [&](std::int64_t c) { vectorised.run(c + 1); });
}

}  // namespace

#define BENCH(fn, name, n, unit) BENCHMARK(fn)->Name(name)->Arg(n)->Unit(unit)->UseRealTime()
#define TAKE(fn, impl)                                                \
  BENCH(fn, "Take/float/" impl "/64", 64, benchmark::kMicrosecond); \
  BENCH(fn, "Take/float/" impl "/1024", 1024, benchmark::kMicrosecond)
#define RANDOM(fn, name)                                                 \
  BENCH(fn, "Random/" name "/1048576", 1 << 20, benchmark::kMillisecond); \
  BENCH(fn, "Random/" name "/16777216", 1 << 24, benchmark::kMillisecond)

TAKE(Take_fusor_function, "fusor_function");
TAKE(Take_hand, "hand");
TAKE(Take_xtensor, "xtensor");

RANDOM((Random_fusor_function<float, false>), "float/uniform/fusor_function");
RANDOM((Random_loop<float, false>), "float/uniform/loop");
RANDOM((Random_loop_scalar<float>), "float/uniform/loop_scalar");
RANDOM((Random_fusor_function<double, false>), "double/uniform/fusor_function");
RANDOM((Random_loop<double, false>), "double/uniform/loop");
RANDOM((Random_loop_scalar<double>), "double/uniform/loop_scalar");
RANDOM((Random_fusor_function<float, true>), "float/normal/fusor_function");
RANDOM((Random_loop<float, true>), "float/normal/loop");
RANDOM((Random_fusor_function<double, true>), "double/normal/fusor_function");
RANDOM((Random_loop<double, true>), "double/normal/loop");

BENCHMARK_MAIN();
