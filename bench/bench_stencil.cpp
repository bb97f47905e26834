// bench/bench_stencil.cpp — one Jacobi step on an n × n grid of doubles
// (n = 512: 2 MiB per buffer, in the last-level cache; n = 2048: 32 MiB per
// buffer, from memory), NumPy's
//
//   u[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) * 0.25
//
// next to its references in the same binary:
//
//   fusor_function    a compiled function with no inputs and one update of the
//                     view u[1:-1, 1:-1] (the plan: copy the border of u into
//                     the spare buffer — 4 boxes —, compute the interior
//                     there, install it; the two buffers alternate)
//   fusor_assign      fusor::assign(view(u, ...), ...) every step (informational:
//                     the same plan, looked up per call)
//   hand              __restrict loop into a second buffer, then the pointers
//                     swapped; the border is preset in both buffers and never
//                     written (the loop anyone would write; the result is the
//                     whole new grid, as fusor's is)
//   hand_copy_border  the same loop, and the border copied from the old
//                     buffer every step (exactly the work fusor's plan does)
//   xtensor_views     xt::noalias(xt::view(b, r, r)) = (four views of a) * 0.25,
//                     then std::swap(a, b); border preset in both, as `hand`
//
// Counters:
//   BW             STREAM-counted bytes per second: 2 · (n−2)² · 8 bytes per
//                  step (the interior read once and written once; the four
//                  shifted reads of one array count once, the border copy and
//                  write-allocate traffic are not counted), kIs1000.
//   speed_vs_hand  time per step of `hand` / this benchmark's time per step
//                  (> 1: faster than the hand loop). `hand` is run for the same
//                  number of steps right after this benchmark's timed loop, in
//                  the same process, on its own two buffers.
//   in_place, news_per_call (fusor) as in bench_function.cpp.
//
// Names are Stencil/double/implementation/n. Every benchmark checks its
// grid after two steps against the hand loop before timing. Measured, never
// asserted. Run: build-bench/bench/bench_stencil --benchmark_repetitions=3
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <utility>

#include <benchmark/benchmark.h>

#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "alloc_count.hpp"
#include "stencil_ref.hpp"

namespace {

using benchmark::Counter;
using benchmark::State;
using grid = xt::xtensor<double, 2>;
using clock_type = std::chrono::steady_clock;

/// The initial grid: values in [0.5, 1.5) (no denormals ever), the top edge 1.0.
grid initial(std::size_t n) {
  grid g = grid::from_shape({n, n});
  for (std::size_t i = 0; i < n * n; ++i) g.data()[i] = 0.5 + static_cast<double>((i * 7919u) % 1000u) * 1e-3;
  for (std::size_t j = 0; j < n; ++j) g(0, j) = 1.0;
  return g;
}

/// Two buffers holding the initial grid, stepped with a hand loop.
struct hand_grids {
  grid a, b;
  double* cur;
  double* nxt;
  std::size_t n;
  explicit hand_grids(std::size_t n_) : a(initial(n_)), b(a), cur(a.data()), nxt(b.data()), n(n_) {}
  void step() {
    sref::jacobi(nxt, cur, n);
    std::swap(cur, nxt);
  }
  void step_copy_border() {
    sref::jacobi_copy_border(nxt, cur, n);
    std::swap(cur, nxt);
  }
};

/// Time per step of the hand loop (border preset) over `steps` steps.
double hand_seconds_per_step(std::size_t n, std::int64_t steps) {
  hand_grids h(n);
  h.step();  // warm: both buffers touched
  h.step();
  const auto t0 = clock_type::now();
  for (std::int64_t k = 0; k < steps; ++k) {
    h.step();
    benchmark::ClobberMemory();
  }
  return std::chrono::duration<double>(clock_type::now() - t0).count() / static_cast<double>(steps);
}

/// The grid after `steps` steps of the hand loop.
grid expected_after(std::size_t n, int steps) {
  hand_grids h(n);
  for (int k = 0; k < steps; ++k) h.step();
  grid out = grid::from_shape({n, n});
  for (std::size_t i = 0; i < n * n; ++i) out.data()[i] = h.cur[i];
  return out;
}

bool check(State& st, const double* got, std::size_t n, int steps) {
  const grid want = expected_after(n, steps);
  for (std::size_t i = 0; i < n * n; ++i)
    if (!(std::fabs(got[i] - want.data()[i]) <= 1e-12)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "wrong result at (%zu, %zu): got %.17g, expected %.17g", i / n, i % n, got[i],
                    want.data()[i]);
      st.SkipWithError(msg);
      return false;
    }
  return true;
}

/// The timed loop, then the counters: BW, news_per_call and, unless this is
/// the hand loop itself, speed_vs_hand.
template <class Body>
void timed(State& st, std::size_t n, bool vs_hand, Body body) {
  const std::size_t news0 = bench_operator_new_calls();
  const auto t0 = clock_type::now();
  for (auto _ : st) {
    body();
    benchmark::ClobberMemory();
  }
  const double own = std::chrono::duration<double>(clock_type::now() - t0).count();
  const std::int64_t steps = st.iterations() > 0 ? st.iterations() : 1;
  st.counters["news_per_call"] =
      Counter(static_cast<double>(bench_operator_new_calls() - news0) / static_cast<double>(steps));
  const double interior = static_cast<double>((n - 2) * (n - 2));
  st.counters["BW"] = Counter(2.0 * interior * sizeof(double), Counter::kIsIterationInvariantRate, Counter::kIs1000);
  if (vs_hand) st.counters["speed_vs_hand"] = Counter(hand_seconds_per_step(n, steps) / (own / static_cast<double>(steps)));
}

template <class S>
auto jacobi_function(S& U) {
  using fusor::_;
  using fusor::range;
  auto v = [&](auto r, auto c) { return fusor::view(U, r, c); };
  return fusor::function(fusor::inputs(),
                         fusor::updates(fusor::update(v(range(1, -1), range(1, -1)),
                                                      (v(range(_, -2), range(1, -1)) + v(range(2, _), range(1, -1)) +
                                                       v(range(1, -1), range(_, -2)) + v(range(1, -1), range(2, _))) *
                                                          0.25)));
}

void Stencil_fusor_function(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto U = fusor::shared(initial(n), "u");
  auto f = jacobi_function(U);
  f();
  f();
  if (!check(st, U.get_value(fusor::borrow).data(), n, 2)) return;
  timed(st, n, true, [&] { f(); });
  st.counters["in_place"] = Counter(f.update_was_in_place(0) ? 1.0 : 0.0);
}

void Stencil_fusor_assign(State& st) {
  using fusor::_;
  using fusor::range;
  const auto n = static_cast<std::size_t>(st.range(0));
  auto U = fusor::shared(initial(n), "u");
  auto v = [&](auto r, auto c) { return fusor::view(U, r, c); };
  auto step = [&] {
    fusor::assign(v(range(1, -1), range(1, -1)), (v(range(_, -2), range(1, -1)) + v(range(2, _), range(1, -1)) +
                                                  v(range(1, -1), range(_, -2)) + v(range(1, -1), range(2, _))) *
                                                     0.25);
  };
  step();
  step();
  if (!check(st, U.get_value(fusor::borrow).data(), n, 2)) return;
  timed(st, n, true, step);
}

void Stencil_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  hand_grids h(n);
  timed(st, n, false, [&] { h.step(); });
}

void Stencil_hand_copy_border(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  hand_grids h(n);
  h.step_copy_border();
  h.step_copy_border();
  if (!check(st, h.cur, n, 2)) return;
  timed(st, n, true, [&] { h.step_copy_border(); });
}

void Stencil_xtensor_views(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  grid a = initial(n), b = a;  // the border preset in both buffers, as in `hand`
  const auto m = static_cast<std::ptrdiff_t>(n);
  auto r = xt::range(1, m - 1), up = xt::range(0, m - 2), down = xt::range(2, m);
  auto step = [&] {
    xt::noalias(xt::view(b, r, r)) =
        (xt::view(a, up, r) + xt::view(a, down, r) + xt::view(a, r, up) + xt::view(a, r, down)) * 0.25;
    std::swap(a, b);
  };
  step();
  step();
  if (!check(st, a.data(), n, 2)) return;
  timed(st, n, true, step);
}

}  // namespace

#define STENCIL(fn, impl)                                                                        \
  BENCHMARK(fn)->Name("Stencil/double/" impl "/512")->Arg(512)->Unit(benchmark::kMicrosecond)->UseRealTime(); \
  BENCHMARK(fn)->Name("Stencil/double/" impl "/2048")->Arg(2048)->Unit(benchmark::kMicrosecond)->UseRealTime()

STENCIL(Stencil_fusor_function, "fusor_function");
STENCIL(Stencil_fusor_assign, "fusor_assign");
STENCIL(Stencil_hand, "hand");
STENCIL(Stencil_hand_copy_border, "hand_copy_border");
STENCIL(Stencil_xtensor_views, "xtensor_views");

BENCHMARK_MAIN();
