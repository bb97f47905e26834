// bench/bench_function.cpp — compiled-function workloads W6–W9 of
// bench/README.md, each next to its references in the same binary.
//
//   W6  (exp(x/5)*2, exp(x/5)+1) in one function (one fused pass) vs two
//       single-output functions (two passes) vs a hand loop; 2^26 doubles
//   W7  PyTensor's test_fused_elemwise_benchmark: logp = -((x-mu)**2)/2 and
//       -(x-mu), x and mu shared, 100 000 doubles, a function with no inputs
//       vs a one-pass hand loop and Eigen
//   W8  call overhead: W2 (o = a*b + c*d - e) at N = 1, 16 through a function
//       over shared variables with a borrowed output, as an update (into a
//       caller's buffer a variable borrowed), over five arguments, and through
//       fusor::assign, vs xtensor noalias, Eigen; reports allocations per call
//   W9  W2 at 2^26 through the function after warm-up vs xtensor noalias into a
//       preallocated array vs xtensor allocating its result each call
//
// Names are WORKLOAD/double/implementation/N; counters BW (STREAM-counted
// bytes/s) and news_per_call. Every benchmark checks its result once before
// timing. Measured, never asserted.
#include <cmath>
#include <cstddef>
#include <cstdio>

#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "alloc_count.hpp"

namespace fref {
void w6_one_pass(double* a, double* b, const double* x, std::size_t n);
void w7(double* logp, double* grad, const double* x, const double* mu, std::size_t n);
void w2(double* o, const double* a, const double* b, const double* c, const double* d, const double* e, std::size_t n);
}  // namespace fref

namespace {

using benchmark::Counter;
using benchmark::State;
using vec = xt::xtensor<double, 1>;

vec make(std::size_t n, unsigned k) {
  vec v = vec::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) v(i) = 0.5 + static_cast<double>((i * 7919u + k * 104729u) % 1000u) * 1e-3;
  return v;
}

void set_bw(State& st, double bytes) {
  st.counters["BW"] = Counter(bytes, Counter::kIsIterationInvariantRate, Counter::kIs1000);
}

template <class Body>
void counted_loop(State& st, Body body) {
  const std::size_t news0 = bench_operator_new_calls();
  for (auto _ : st) {
    body();
    benchmark::ClobberMemory();
  }
  const double calls = static_cast<double>(st.iterations() > 0 ? st.iterations() : 1);
  st.counters["news_per_call"] = Counter(static_cast<double>(bench_operator_new_calls() - news0) / calls);
}

bool close(State& st, double got, double want) {
  if (std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want))) return true;
  char msg[160];
  std::snprintf(msg, sizeof msg, "wrong result: got %.17g, expected %.17g", got, want);
  st.SkipWithError(msg);
  return false;
}

// ------------------------------------------------------------------ W6

void W6_fused(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto x = fusor::shared(make(n, 1), "x");
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::exp(x / 5.0) * 2.0, fusor::borrow),
                                                           fusor::Out(fusor::exp(x / 5.0) + 1.0, fusor::borrow)));
  {
    auto [a, b] = f();
    const double x1 = x.get_value(fusor::borrow).flat(n - 1);
    if (!close(st, a.flat(n - 1), std::exp(x1 / 5.0) * 2.0) || !close(st, b.flat(n - 1), std::exp(x1 / 5.0) + 1.0)) return;
  }
  counted_loop(st, [&] {
    auto r = f();
    benchmark::DoNotOptimize(std::get<0>(r).data());
  });
  set_bw(st, double(n) * 8 * 3);
}

void W6_two_passes(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto x = fusor::shared(make(n, 1), "x");
  auto f1 = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::exp(x / 5.0) * 2.0, fusor::borrow)));
  auto f2 = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::exp(x / 5.0) + 1.0, fusor::borrow)));
  if (!close(st, f1().flat(0), std::exp(x.get_value(fusor::borrow).flat(0) / 5.0) * 2.0)) return;
  counted_loop(st, [&] {
    auto a = f1();
    auto b = f2();
    benchmark::DoNotOptimize(a.data());
    benchmark::DoNotOptimize(b.data());
  });
  set_bw(st, double(n) * 8 * 3);
}

void W6_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  vec x = make(n, 1), a = vec::from_shape({n}), b = vec::from_shape({n});
  fref::w6_one_pass(a.data(), b.data(), x.data(), n);
  if (!close(st, a(n - 1), std::exp(x(n - 1) / 5.0) * 2.0)) return;
  counted_loop(st, [&] { fref::w6_one_pass(a.data(), b.data(), x.data(), n); });
  set_bw(st, double(n) * 8 * 3);
}

// ------------------------------------------------------------------ W7

void W7_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto x = fusor::shared(make(n, 1), "x");
  auto mu = fusor::shared(make(n, 2), "mu");
  auto logp = -((x - mu) * (x - mu)) / 2.0;
  auto grad = -(x - mu);
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(logp, fusor::borrow), fusor::Out(grad, fusor::borrow)));
  {
    auto [l, g] = f();
    const double d = x.get_value(fusor::borrow).flat(3) - mu.get_value(fusor::borrow).flat(3);
    if (!close(st, l.flat(3), -(d * d) / 2.0) || !close(st, g.flat(3), -d)) return;
  }
  counted_loop(st, [&] {
    auto r = f();
    benchmark::DoNotOptimize(std::get<0>(r).data());
  });
  set_bw(st, double(n) * 8 * 4);
}

void W7_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  vec x = make(n, 1), mu = make(n, 2), l = vec::from_shape({n}), g = vec::from_shape({n});
  counted_loop(st, [&] { fref::w7(l.data(), g.data(), x.data(), mu.data(), n); });
  set_bw(st, double(n) * 8 * 4);
}

void W7_eigen(State& st) {
  const auto n = static_cast<Eigen::Index>(st.range(0));
  Eigen::ArrayXd x(n), mu(n), l(n), g(n);
  const vec xv = make(static_cast<std::size_t>(n), 1), mv = make(static_cast<std::size_t>(n), 2);
  for (Eigen::Index i = 0; i < n; ++i) x(i) = xv(i), mu(i) = mv(i);
  counted_loop(st, [&] {
    l = -((x - mu) * (x - mu)) / 2.0;
    g = -(x - mu);
    benchmark::DoNotOptimize(l.data());
    benchmark::DoNotOptimize(g.data());
  });
  set_bw(st, double(n) * 8 * 4);
}

// ------------------------------------------------------------------ W8 / W9 (W2 through a function)

struct w2_shared {
  fusor::shared<vec> a, b, c, d, e, o;
  explicit w2_shared(std::size_t n)
      : a(make(n, 1)), b(make(n, 2)), c(make(n, 3)), d(make(n, 4)), e(make(n, 5)), o(vec::from_shape({n})) {}
  double expected(std::size_t i) const {
    auto v = [&](const fusor::shared<vec>& s) { return s.get_value(fusor::borrow).flat(i); };
    return v(a) * v(b) + v(c) * v(d) - v(e);
  }
};

void W2_function(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  w2_shared s(n);
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(s.a * s.b + s.c * s.d - s.e, fusor::borrow)));
  if (!close(st, f().flat(n - 1), s.expected(n - 1))) return;
  counted_loop(st, [&] {
    auto r = f();
    benchmark::DoNotOptimize(r.data());
  });
  set_bw(st, double(n) * 8 * 6);
}

void W2_function_args(State& st) {
  // The same expression over five arguments (the caller's arrays, the same
  // ones every call) instead of shared variables.
  const auto n = static_cast<std::size_t>(st.range(0));
  vec a = make(n, 1), b = make(n, 2), c = make(n, 3), d = make(n, 4), e = make(n, 5);
  fusor::vector<double> A{"a"}, B{"b"}, C{"c"}, D{"d"}, E{"e"};
  auto f = fusor::function(fusor::inputs(A, B, C, D, E), fusor::outputs(fusor::Out(A * B + C * D - E, fusor::borrow)));
  if (!close(st, f(a, b, c, d, e).flat(n - 1), a(n - 1) * b(n - 1) + c(n - 1) * d(n - 1) - e(n - 1))) return;
  counted_loop(st, [&] {
    auto r = f(a, b, c, d, e);
    benchmark::DoNotOptimize(r.data());
  });
  set_bw(st, double(n) * 8 * 6);
}

void W2_function_update(State& st) {
  // The same expression as an update into o (in place every call).
  const auto n = static_cast<std::size_t>(st.range(0));
  w2_shared s(n);
  auto f = fusor::function(fusor::inputs(), fusor::updates(fusor::update(s.o, s.a * s.b + s.c * s.d - s.e)));
  f();
  if (!close(st, s.o.get_value(fusor::borrow).flat(n - 1), s.expected(n - 1))) return;
  counted_loop(st, [&] { f(); });
  st.counters["in_place"] = Counter(f.update_was_in_place(0) ? 1.0 : 0.0);
  set_bw(st, double(n) * 8 * 6);
}

void W2_assign(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  w2_shared s(n);
  fusor::assign(s.o, s.a * s.b + s.c * s.d - s.e);
  if (!close(st, s.o.get_value(fusor::borrow).flat(n - 1), s.expected(n - 1))) return;
  counted_loop(st, [&] { fusor::assign(s.o, s.a * s.b + s.c * s.d - s.e); });
  set_bw(st, double(n) * 8 * 6);
}

void W2_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  vec a = make(n, 1), b = make(n, 2), c = make(n, 3), d = make(n, 4), e = make(n, 5), o = vec::from_shape({n});
  counted_loop(st, [&] { fref::w2(o.data(), a.data(), b.data(), c.data(), d.data(), e.data(), n); });
  set_bw(st, double(n) * 8 * 6);
}

void W2_xtensor_noalias(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  vec a = make(n, 1), b = make(n, 2), c = make(n, 3), d = make(n, 4), e = make(n, 5), o = vec::from_shape({n});
  counted_loop(st, [&] {
    xt::noalias(o) = a * b + c * d - e;
    benchmark::DoNotOptimize(o.data());
  });
  set_bw(st, double(n) * 8 * 6);
}

void W2_xtensor_alloc(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  vec a = make(n, 1), b = make(n, 2), c = make(n, 3), d = make(n, 4), e = make(n, 5);
  counted_loop(st, [&] {
    vec o = a * b + c * d - e;
    benchmark::DoNotOptimize(o.data());
  });
  set_bw(st, double(n) * 8 * 6);
}

void W2_eigen(State& st) {
  const auto n = static_cast<Eigen::Index>(st.range(0));
  Eigen::ArrayXd a(n), b(n), c(n), d(n), e(n), o(n);
  const vec av = make(static_cast<std::size_t>(n), 1), bv = make(static_cast<std::size_t>(n), 2),
            cv = make(static_cast<std::size_t>(n), 3), dv = make(static_cast<std::size_t>(n), 4),
            ev = make(static_cast<std::size_t>(n), 5);
  for (Eigen::Index i = 0; i < n; ++i) a(i) = av(i), b(i) = bv(i), c(i) = cv(i), d(i) = dv(i), e(i) = ev(i);
  counted_loop(st, [&] {
    o = a * b + c * d - e;
    benchmark::DoNotOptimize(o.data());
  });
  set_bw(st, double(n) * 8 * 6);
}

constexpr std::int64_t big = std::int64_t{1} << 26;

}  // namespace

BENCHMARK(W6_fused)->Name("W6/double/fusor_one_function/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W6_two_passes)->Name("W6/double/fusor_two_functions/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W6_hand)->Name("W6/double/hand_one_pass/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W7_fusor)->Name("W7/double/fusor_function/100000")->Arg(100000);
BENCHMARK(W7_hand)->Name("W7/double/hand/100000")->Arg(100000);
BENCHMARK(W7_eigen)->Name("W7/double/eigen/100000")->Arg(100000);
BENCHMARK(W2_function)->Name("W8/double/fusor_function/1")->Arg(1);
BENCHMARK(W2_function)->Name("W8/double/fusor_function/16")->Arg(16);
BENCHMARK(W2_function_update)->Name("W8/double/fusor_function_update/16")->Arg(16);
BENCHMARK(W2_function_args)->Name("W8/double/fusor_function_args/1")->Arg(1);
BENCHMARK(W2_function_args)->Name("W8/double/fusor_function_args/16")->Arg(16);
BENCHMARK(W2_assign)->Name("W8/double/fusor_assign/1")->Arg(1);
BENCHMARK(W2_assign)->Name("W8/double/fusor_assign/16")->Arg(16);
BENCHMARK(W2_xtensor_noalias)->Name("W8/double/xtensor_noalias/1")->Arg(1);
BENCHMARK(W2_xtensor_noalias)->Name("W8/double/xtensor_noalias/16")->Arg(16);
BENCHMARK(W2_eigen)->Name("W8/double/eigen/1")->Arg(1);
BENCHMARK(W2_eigen)->Name("W8/double/eigen/16")->Arg(16);
BENCHMARK(W2_hand)->Name("W8/double/hand/16")->Arg(16);
BENCHMARK(W2_function)->Name("W9/double/fusor_function/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W2_function_update)->Name("W9/double/fusor_function_update/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W2_xtensor_noalias)->Name("W9/double/xtensor_noalias_preallocated/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W2_xtensor_alloc)->Name("W9/double/xtensor_allocate_per_call/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(W2_hand)->Name("W9/double/hand/67108864")->Arg(big)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
