// bench/bench_select.cpp — W5-style throughput (N = 4096 doubles, in cache) of
// the selections whose NaN handling fusor defines: maximum(a, 0), clip(a, -1,
// 1) and the max reduction, each next to raw xsimd loops built with the same
// flags (NaN-propagating: like for like; xsimd::max: the instruction's own,
// the ceiling) and a scalar loop; where(mask, a, b) with a bool mask against
// where(a > 0, a, b) and a plain loop; wrapping integer arithmetic against a
// plain loop. Names: W5s.KERNEL/double/IMPL/N. Counters:
// ns_per_elem and BW (STREAM-counted). Measured, never asserted.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>

#include <benchmark/benchmark.h>

#include <fusor/fusor.hpp>

#include "ref_select.hpp"

namespace {
using benchmark::Counter;
using benchmark::State;

constexpr std::size_t n = 4096;

/// Inputs in [-3.9, 3.9], deterministic, exact in binary (so that no
/// contraction into an FMA changes them between the data and the check); no
/// NaN: the timing is of the common case.
double input(std::size_t i) { return (static_cast<double>((i * 7919u) % 1000u) - 500.0) / 128.0; }

xt::xtensor<double, 1> make_input() {
  auto x = xt::xtensor<double, 1>::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) x(i) = input(i);
  return x;
}

void counters(State& st, double bytes) {
  st.counters["BW"] = Counter(bytes, Counter::kIsIterationInvariantRate, Counter::kIs1000);
  st.counters["ns_per_elem"] = Counter(double(n) * 1e-9, Counter::kIsIterationInvariantRate | Counter::kInvert);
}

enum class kernel { relu, clip, max };

template <kernel K>
double expected(std::size_t i) {
  const double a = input(i);
  if constexpr (K == kernel::relu) return a < 0 ? 0 : a;
  else return a < -1 ? -1 : (a > 1 ? 1 : a);
}

template <kernel K>
void fusor_row(State& st) {
  auto a = fusor::shared(make_input(), "a");
  auto o = fusor::shared(xt::xtensor<double, 1>::from_shape({n}), "o");
  if constexpr (K == kernel::max) {
    double r = 0;
    for (auto _ : st) {
      r = fusor::eval(fusor::max(a));
      benchmark::DoNotOptimize(r);
    }
    double want = input(0);
    for (std::size_t i = 1; i < n; ++i) want = std::max(want, input(i));
    if (r != want) st.SkipWithError("wrong max");
    counters(st, double(n) * 8);
  } else {
    auto run = [&] {
      if constexpr (K == kernel::relu) fusor::assign(o, fusor::maximum(a, 0.0));
      else fusor::assign(o, fusor::clip(a, -1.0, 1.0));
    };
    for (auto _ : st) {
      run();
      benchmark::ClobberMemory();
    }
    const double* p = o.get_value(fusor::borrow).data();
    for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
      if (p[i] != expected<K>(i)) st.SkipWithError("wrong result");
    counters(st, double(n) * 16);
  }
}

template <kernel K, ref_select::kind R>
void ref_row(State& st) {
  const auto a = make_input();
  auto o = xt::xtensor<double, 1>::from_shape({n});
  if constexpr (K == kernel::max) {
    double r = 0;
    for (auto _ : st) {
      r = ref_select::max(R, a.data(), n);
      benchmark::DoNotOptimize(r);
    }
    counters(st, double(n) * 8);
  } else {
    for (auto _ : st) {
      if constexpr (K == kernel::relu) ref_select::relu(R, o.data(), a.data(), n);
      else ref_select::clip(R, o.data(), a.data(), n);
      benchmark::ClobberMemory();
    }
    for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
      if (o(i) != expected<K>(i)) st.SkipWithError("wrong result");
    counters(st, double(n) * 16);
  }
}

// where(cond, a, b) with a bool mask held in memory against the same select
// with the condition computed (a > 0): the mask is read as bytes and widened
// to a lane mask, the comparison is one vector compare. A function update in
// place, so no eval fixed cost is timed.
enum class where_cond { mask, compare };

struct where_data {
  xt::xtensor<double, 1> a = make_input();
  xt::xtensor<double, 1> b = -a * 0.5;
  xt::xtensor<bool, 1> m = a > 0.0;
  double expected(std::size_t i) const { return m(i) ? a(i) : b(i); }
};

template <where_cond C>
void where_fusor(State& st) {
  const where_data d;
  auto a = fusor::shared(d.a, "a");
  auto b = fusor::shared(d.b, "b");
  auto m = fusor::shared(d.m, "m");
  auto o = fusor::shared(xt::xtensor<double, 1>::from_shape({n}), "o");
  auto f = [&] {
    if constexpr (C == where_cond::mask)
      return fusor::function(fusor::inputs(), fusor::updates(fusor::update(o, fusor::where(m, a, b))));
    else
      return fusor::function(fusor::inputs(), fusor::updates(fusor::update(o, fusor::where(a > 0.0, a, b))));
  }();
  for (auto _ : st) {
    f();
    benchmark::ClobberMemory();
  }
  const double* p = o.get_value(fusor::borrow).data();
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
    if (p[i] != d.expected(i)) st.SkipWithError("wrong result");
  counters(st, double(n) * (C == where_cond::mask ? 25 : 24));
}

void where_loop(State& st) {
  const where_data d;
  auto o = xt::xtensor<double, 1>::from_shape({n});
  for (auto _ : st) {
    const double* a = d.a.data();
    const double* b = d.b.data();
    const bool* m = d.m.data();
    double* out = o.data();
    for (std::size_t i = 0; i < n; ++i) out[i] = m[i] ? a[i] : b[i];
    benchmark::ClobberMemory();
  }
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
    if (o(i) != d.expected(i)) st.SkipWithError("wrong result");
  counters(st, double(n) * 25);
}

// Integer arithmetic (wrapping): o = a * b + c for int32 and o = a + b - c
// for int64, an in-place update in a function, next to a plain loop in the
// unsigned type (the same wrapping arithmetic; GCC vectorises it).
template <class T>
struct int_data {
  xt::xtensor<T, 1> a = xt::xtensor<T, 1>::from_shape({n}), b = a, c = a;
  int_data() {
    for (std::size_t i = 0; i < n; ++i) {
      a(i) = static_cast<T>(i * 2654435761u);
      b(i) = static_cast<T>(i * 40503u + 7);
      c(i) = static_cast<T>(n - i);
    }
  }
  T expected(std::size_t i) const {
    using U = std::make_unsigned_t<T>;
    if constexpr (sizeof(T) == 4) return static_cast<T>(U(a(i)) * U(b(i)) + U(c(i)));
    else return static_cast<T>(U(a(i)) + U(b(i)) - U(c(i)));
  }
};

template <class T>
void int_fusor(State& st) {
  const int_data<T> d;
  auto a = fusor::shared(d.a, "a");
  auto b = fusor::shared(d.b, "b");
  auto c = fusor::shared(d.c, "c");
  auto o = fusor::shared(xt::xtensor<T, 1>::from_shape({n}), "o");
  auto f = [&] {
    if constexpr (sizeof(T) == 4) return fusor::function(fusor::inputs(), fusor::updates(fusor::update(o, a * b + c)));
    else return fusor::function(fusor::inputs(), fusor::updates(fusor::update(o, a + b - c)));
  }();
  for (auto _ : st) {
    f();
    benchmark::ClobberMemory();
  }
  const T* p = o.get_value(fusor::borrow).data();
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
    if (p[i] != d.expected(i)) st.SkipWithError("wrong result");
  counters(st, double(n) * 4 * sizeof(T));
}

template <class T>
void int_loop(State& st) {
  const int_data<T> d;
  using U = std::make_unsigned_t<T>;
  auto o = xt::xtensor<T, 1>::from_shape({n});
  for (auto _ : st) {
    const T *a = d.a.data(), *b = d.b.data(), *c = d.c.data();
    T* out = o.data();
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (sizeof(T) == 4) out[i] = static_cast<T>(U(a[i]) * U(b[i]) + U(c[i]));
      else out[i] = static_cast<T>(U(a[i]) + U(b[i]) - U(c[i]));
    }
    benchmark::ClobberMemory();
  }
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, n / 2, n - 1})
    if (o(i) != d.expected(i)) st.SkipWithError("wrong result");
  counters(st, double(n) * 4 * sizeof(T));
}

template <kernel K>
void register_kernel(const char* name) {
  const std::string base = std::string("W5s.") + name + "/double/";
  auto reg = [&](const std::string& impl, void (*fn)(State&)) {
    benchmark::RegisterBenchmark((base + impl + "/" + std::to_string(n)).c_str(), fn)->Unit(benchmark::kMicrosecond);
  };
  reg("fusor", fusor_row<K>);
  reg("xsimd_nan", ref_row<K, ref_select::kind::xsimd_nan>);
  reg("xsimd_max", ref_row<K, ref_select::kind::xsimd_max>);
  reg("scalar", ref_row<K, ref_select::kind::scalar>);
}
}  // namespace

int main(int argc, char** argv) {
  register_kernel<kernel::relu>("maximum0");
  register_kernel<kernel::clip>("clip");
  register_kernel<kernel::max>("max");
  for (auto [name, fn] : {std::pair{"W5s.where_mask/double/fusor/", &where_fusor<where_cond::mask>},
                          std::pair{"W5s.where_compare/double/fusor/", &where_fusor<where_cond::compare>},
                          std::pair{"W5s.where_mask/double/loop/", &where_loop}})
    benchmark::RegisterBenchmark((std::string(name) + std::to_string(n)).c_str(), fn)->Unit(benchmark::kMicrosecond);
  for (auto [name, fn] : {std::pair{"W5s.int_mul_add/int32/fusor/", &int_fusor<std::int32_t>},
                          std::pair{"W5s.int_mul_add/int32/loop/", &int_loop<std::int32_t>},
                          std::pair{"W5s.int_add_sub/int64/fusor/", &int_fusor<std::int64_t>},
                          std::pair{"W5s.int_add_sub/int64/loop/", &int_loop<std::int64_t>}})
    benchmark::RegisterBenchmark((std::string(name) + std::to_string(n)).c_str(), fn)->Unit(benchmark::kMicrosecond);
  benchmark::AddCustomContext("xsimd_arch", xsimd::default_arch::name());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
