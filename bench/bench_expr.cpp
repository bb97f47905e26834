// bench/bench_expr.cpp — fusor's CPU benchmark suite, workloads W1–W5 of
// bench/README.md, each next to its references in the same binary.
//
//   W1  STREAM kernels (copy, scale, add, triad) in the DSL   vs __restrict loops, xtensor noalias,
//                                                                 STREAM's own triad (the ceiling),
//                                                                 memcpy for copy (informational)
//   W2  o = a*b + c*d - e                                      vs hand loop, xtensor noalias, Eigen,
//                                                                 eager evaluation with temporaries
//   W3  o = ((a+b)*(c-d) + e*f)/(g+h)                          vs hand loop
//   W4  exp(2*x*y + y), x 200×500, y (500) broadcast           vs scalar loop, xsimd loops, Eigen rowwise
//   W5  exp, log, tanh, sigmoid; exp(a)*b + log1p(c), N=4096   vs raw xsimd loops, scalar std:: loop
//
// The raw xsimd loops exist twice (ref_xsimd.cpp): "xsimd" is compiled with the
// flags of this file (like for like with fusor), "xsimd_w512" with
// -mprefer-vector-width=512 added, as the hand loops are.
//
// Names are WORKLOAD/dtype/implementation/N. Counters: BW (bytes/s counted
// STREAM-style: N·sizeof(T)·(distinct input arrays + outputs), broadcast
// operands once), ns_per_elem, and for fusor rows in_place (1 when assign wrote
// into the destination's own buffer) and news_per_call (global operator new
// calls per evaluation). Every benchmark checks a few elements of its result
// once before timing and stops with SkipWithError when one is wrong.
//
// Measured, never asserted: bench/report.py turns the JSON into the table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <xsimd/xsimd.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "alloc_count.hpp"
#include "ref_kernels.hpp"

namespace {

using benchmark::Counter;
using benchmark::State;

// ------------------------------------------------------------------ data

/// Deterministic input values in [0.5, 1.5), different per array k.
inline double value(unsigned k, std::size_t i) {
  return 0.5 + static_cast<double>((i * 7919u + k * 104729u + (i >> 10) * 31u) % 1000u) * 1e-3;
}

/// A 1-d xt::xarray of n elements, written once here (first touch, outside any
/// timed region). kind < 0: zeros.
template <class T>
xt::xarray<T> make_array(std::size_t n, int kind, double scale = 1.0, double shift = 0.0) {
  auto x = xt::xarray<T>::from_shape({n});
  T* p = x.data();
  if (kind < 0) {
    for (std::size_t i = 0; i < n; ++i) p[i] = T(0);
  } else {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(value(static_cast<unsigned>(kind), i) * scale + shift);
  }
  return x;
}

template <class T>
T input(int kind, std::size_t i, double scale = 1.0, double shift = 0.0) {
  return static_cast<T>(value(static_cast<unsigned>(kind), i) * scale + shift);
}

/// Compares a few elements of `out` with `expected(i)` (computed in double from
/// the same inputs). On a mismatch: SkipWithError and false.
template <class T, class F>
bool check(State& st, const T* out, std::size_t n, F expected) {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-11;
  const std::size_t probes[] = {0, 1, 2, 7, n / 3, n / 2, n - 2, n - 1};
  for (std::size_t i : probes) {
    if (i >= n) continue;
    const double want = expected(i);
    const double got = static_cast<double>(out[i]);
    if (!(std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)))) {
      char msg[200];
      std::snprintf(msg, sizeof msg, "wrong result at element %zu: got %.17g, expected %.17g", i, got, want);
      st.SkipWithError(msg);
      return false;
    }
  }
  return true;
}

template <class T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

/// STREAM-style bandwidth: bytes counted per evaluation.
void set_bw(State& st, double bytes) {
  st.counters["BW"] = Counter(bytes, Counter::kIsIterationInvariantRate, Counter::kIs1000);
}
/// ns per element (time / N).
void set_ns_per_elem(State& st, double n) {
  st.counters["ns_per_elem"] = Counter(n * 1e-9, Counter::kIsIterationInvariantRate | Counter::kInvert);
}

template <class V>
auto data_of(const fusor::shared<V>& s) {
  return s.get_value(fusor::borrow).data();
}

/// Runs the timed loop of a fusor benchmark: counts operator new calls and
/// checks that the destination buffer stayed the same (in-place assign).
template <class V, class Body>
void fusor_loop(State& st, const fusor::shared<V>& dest, Body body) {
  const auto* before = data_of(dest);
  const std::size_t news0 = bench_operator_new_calls();
  for (auto _ : st) {
    body();
    benchmark::ClobberMemory();
  }
  const std::size_t news = bench_operator_new_calls() - news0;
  st.counters["news_per_call"] = Counter(static_cast<double>(news) / static_cast<double>(std::max<std::int64_t>(1, st.iterations())));
  st.counters["in_place"] = Counter(data_of(dest) == before ? 1.0 : 0.0);
}

template <class Body>
void plain_loop(State& st, Body body) {
  for (auto _ : st) {
    body();
    benchmark::ClobberMemory();
  }
}

// ------------------------------------------------------------------ W1: STREAM kernels

enum class sk { copy, scale, add, triad };
constexpr const char* sk_name(sk k) {
  return k == sk::copy ? "copy" : k == sk::scale ? "scale" : k == sk::add ? "add" : "triad";
}
constexpr int sk_arrays(sk k) { return k == sk::copy || k == sk::scale ? 2 : 3; }
constexpr double q_stream = 3.0;

/// Arrays as in STREAM: a (kind 0), b (kind 1), c (kind 2). Expected output of
/// each kernel, from the initial inputs (each benchmark runs one kernel only).
template <class T>
double w1_expected(sk k, std::size_t i) {
  const double a = input<T>(0, i), b = input<T>(1, i), c = input<T>(2, i);
  const double q = static_cast<T>(q_stream);
  switch (k) {
    case sk::copy: return a;
    case sk::scale: return q * c;
    case sk::add: return a + b;
    case sk::triad: return b + q * c;
  }
  return 0;
}

template <class T, sk K>
void W1_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const T q = static_cast<T>(q_stream);
  auto a = fusor::shared(make_array<T>(n, 0));
  auto b = fusor::shared(make_array<T>(n, 1));
  auto c = fusor::shared(make_array<T>(n, 2));
  auto& dest = K == sk::copy ? c : K == sk::scale ? b : K == sk::add ? c : a;
  auto run = [&] {
    if constexpr (K == sk::copy) fusor::assign(c, a);
    else if constexpr (K == sk::scale) fusor::assign(b, q * c);
    else if constexpr (K == sk::add) fusor::assign(c, a + b);
    else fusor::assign(a, b + q * c);
  };
  run();
  if (!check(st, data_of(dest), n, [&](std::size_t i) { return w1_expected<T>(K, i); })) return;
  fusor_loop(st, dest, run);
  set_bw(st, double(n) * sizeof(T) * sk_arrays(K));
}

template <class T, sk K>
void W1_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const T q = static_cast<T>(q_stream);
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2);
  T* dest = K == sk::copy ? c.data() : K == sk::scale ? b.data() : K == sk::add ? c.data() : a.data();
  auto run = [&] {
    if constexpr (K == sk::copy) ref::copy<T>(c.data(), a.data(), n);
    else if constexpr (K == sk::scale) ref::scale<T>(b.data(), c.data(), q, n);
    else if constexpr (K == sk::add) ref::add<T>(c.data(), a.data(), b.data(), n);
    else ref::triad<T>(a.data(), b.data(), c.data(), q, n);
    benchmark::DoNotOptimize(dest);
  };
  run();
  if (!check(st, dest, n, [&](std::size_t i) { return w1_expected<T>(K, i); })) return;
  plain_loop(st, run);
  set_bw(st, double(n) * sizeof(T) * sk_arrays(K));
}

/// W1 copy through std::memcpy (glibc: non-temporal stores for large sizes,
/// so no write-allocate traffic): what a copy can reach beyond a plain loop.
template <class T>
void W1_memcpy(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_array<T>(n, 0), c = make_array<T>(n, 2);
  auto run = [&] {
    std::memcpy(c.data(), a.data(), n * sizeof(T));
    benchmark::DoNotOptimize(c.data());
  };
  run();
  if (!check(st, c.data(), n, [&](std::size_t i) { return w1_expected<T>(sk::copy, i); })) return;
  plain_loop(st, run);
  set_bw(st, double(n) * sizeof(T) * 2);
}

template <class T, sk K>
void W1_xtensor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const T q = static_cast<T>(q_stream);
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2);
  T* dest = K == sk::copy ? c.data() : K == sk::scale ? b.data() : K == sk::add ? c.data() : a.data();
  auto run = [&] {
    if constexpr (K == sk::copy) xt::noalias(c) = a;
    else if constexpr (K == sk::scale) xt::noalias(b) = q * c;
    else if constexpr (K == sk::add) xt::noalias(c) = a + b;
    else xt::noalias(a) = b + q * c;
    benchmark::DoNotOptimize(dest);
  };
  run();
  if (!check(st, dest, n, [&](std::size_t i) { return w1_expected<T>(K, i); })) return;
  plain_loop(st, run);
  set_bw(st, double(n) * sizeof(T) * sk_arrays(K));
}

/// STREAM's triad kernel (global arrays, the loop of stream.c). Each timed
/// iteration runs `reps` triads so that the clock reads stay negligible at
/// small N; the iteration time is measured by hand (UseManualTime) and the
/// best single-iteration rate is reported as best_BW (STREAM's statistic).
template <class T>
void W1_stream(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const T q = static_cast<T>(q_stream);
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2);
  ref::stream_arrays<T>::a = a.data();
  ref::stream_arrays<T>::b = b.data();
  ref::stream_arrays<T>::c = c.data();
  ref::stream_arrays<T>::n = n;
  const std::size_t reps = std::max<std::size_t>(1, (std::size_t(1) << 16) / n);
  ref::stream_triad<T>(q);  // the first iteration is discarded, as STREAM does
  if (!check(st, a.data(), n, [&](std::size_t i) { return w1_expected<T>(sk::triad, i); })) return;
  double best = std::numeric_limits<double>::infinity();
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < reps; ++r) {
      ref::stream_triad<T>(q);
      benchmark::ClobberMemory();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.SetIterationTime(dt);
    best = std::min(best, dt);
  }
  const double bytes = double(n) * sizeof(T) * 3 * double(reps);
  set_bw(st, bytes);
  st.counters["best_BW"] = Counter(bytes / best, Counter::kDefaults, Counter::kIs1000);
  st.counters["reps"] = Counter(double(reps));
}

// ------------------------------------------------------------------ W2: a*b + c*d - e

template <class T>
double w2_expected(std::size_t i) {
  const double a = input<T>(0, i), b = input<T>(1, i), c = input<T>(2, i), d = input<T>(3, i), e = input<T>(4, i);
  return a * b + c * d - e;
}
template <class T>
double w2_bytes(std::size_t n) {
  return double(n) * sizeof(T) * 6;
}

template <class T>
void W2_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = fusor::shared(make_array<T>(n, 0)), b = fusor::shared(make_array<T>(n, 1)),
       c = fusor::shared(make_array<T>(n, 2)), d = fusor::shared(make_array<T>(n, 3)),
       e = fusor::shared(make_array<T>(n, 4)), o = fusor::shared(make_array<T>(n, -1));
  auto run = [&] { fusor::assign(o, a * b + c * d - e); };
  run();
  if (!check(st, data_of(o), n, w2_expected<T>)) return;
  fusor_loop(st, o, run);
  set_bw(st, w2_bytes<T>(n));
}

template <class T>
void W2_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2), d = make_array<T>(n, 3),
       e = make_array<T>(n, 4), o = make_array<T>(n, -1);
  auto run = [&] {
    ref::w2<T>(o.data(), a.data(), b.data(), c.data(), d.data(), e.data(), n);
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, w2_expected<T>)) return;
  plain_loop(st, run);
  set_bw(st, w2_bytes<T>(n));
}

template <class T>
void W2_xtensor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2), d = make_array<T>(n, 3),
       e = make_array<T>(n, 4), o = make_array<T>(n, -1);
  auto run = [&] {
    xt::noalias(o) = a * b + c * d - e;
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, w2_expected<T>)) return;
  plain_loop(st, run);
  set_bw(st, w2_bytes<T>(n));
}

template <class T>
using earray = Eigen::Array<T, Eigen::Dynamic, 1>;

template <class T>
earray<T> make_eigen(std::size_t n, int kind, double scale = 1.0, double shift = 0.0) {
  earray<T> x(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i)
    x[static_cast<Eigen::Index>(i)] = kind < 0 ? T(0) : input<T>(kind, i, scale, shift);
  return x;
}

template <class T>
void W2_eigen(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_eigen<T>(n, 0), b = make_eigen<T>(n, 1), c = make_eigen<T>(n, 2), d = make_eigen<T>(n, 3),
       e = make_eigen<T>(n, 4), o = make_eigen<T>(n, -1);
  auto run = [&] {
    o = a * b + c * d - e;
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, w2_expected<T>)) return;
  plain_loop(st, run);
  set_bw(st, w2_bytes<T>(n));
}

/// What NumPy does for `o = a*b + c*d - e`: every operation is materialised in
/// a freshly allocated array (t1 = a*b, t2 = c*d, t3 = t1 + t2, r = t3 - e),
/// temporaries freed as soon as they are dead, the result rebound to o (the
/// previous result freed).
template <class T>
void W2_eager(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_array<T>(n, 0), b = make_array<T>(n, 1), c = make_array<T>(n, 2), d = make_array<T>(n, 3),
       e = make_array<T>(n, 4);
  xt::xarray<T> o;
  auto run = [&] {
    xt::xarray<T> r;
    {
      xt::xarray<T> t3;
      {
        xt::xarray<T> t1 = a * b;
        xt::xarray<T> t2 = c * d;
        t3 = t1 + t2;
      }
      r = t3 - e;
    }
    o = std::move(r);
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, w2_expected<T>)) return;
  plain_loop(st, run);
  set_bw(st, w2_bytes<T>(n));
}

// ------------------------------------------------------------------ W3: 8-input chain

template <class T>
double w3_expected(std::size_t i) {
  double v[8];
  for (int k = 0; k < 8; ++k) v[k] = input<T>(k, i);
  return ((v[0] + v[1]) * (v[2] - v[3]) + v[4] * v[5]) / (v[6] + v[7]);
}

template <class T>
void W3_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = fusor::shared(make_array<T>(n, 0)), b = fusor::shared(make_array<T>(n, 1)),
       c = fusor::shared(make_array<T>(n, 2)), d = fusor::shared(make_array<T>(n, 3)),
       e = fusor::shared(make_array<T>(n, 4)), f = fusor::shared(make_array<T>(n, 5)),
       g = fusor::shared(make_array<T>(n, 6)), h = fusor::shared(make_array<T>(n, 7)),
       o = fusor::shared(make_array<T>(n, -1));
  auto run = [&] { fusor::assign(o, ((a + b) * (c - d) + e * f) / (g + h)); };
  run();
  if (!check(st, data_of(o), n, w3_expected<T>)) return;
  fusor_loop(st, o, run);
  set_bw(st, double(n) * sizeof(T) * 9);
}

template <class T>
void W3_hand(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  std::vector<xt::xarray<T>> v;
  for (int k = 0; k < 8; ++k) v.push_back(make_array<T>(n, k));
  auto o = make_array<T>(n, -1);
  auto run = [&] {
    ref::w3<T>(o.data(), v[0].data(), v[1].data(), v[2].data(), v[3].data(), v[4].data(), v[5].data(), v[6].data(),
               v[7].data(), n);
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, w3_expected<T>)) return;
  plain_loop(st, run);
  set_bw(st, double(n) * sizeof(T) * 9);
}

// ------------------------------------------------------------------ W4: broadcast exp(2*x*y + y)

constexpr std::size_t w4_rows = 200, w4_cols = 500;

// x in [-1, 1), y in [-1, 1): 2*x*y + y stays in [-3, 3].
double w4_x(std::size_t i) { return value(0, i) * 2.0 - 2.0; }
double w4_y(std::size_t j) { return value(1, j) * 2.0 - 2.0; }
double w4_expected(std::size_t i) {
  const double x = w4_x(i), y = w4_y(i % w4_cols);
  return std::exp(2.0 * x * y + y);
}
double w4_bytes() { return double(2 * w4_rows * w4_cols + w4_cols) * sizeof(double); }

xt::xtensor<double, 2> w4_make_x() {
  xt::xtensor<double, 2> x = xt::xtensor<double, 2>::from_shape({w4_rows, w4_cols});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = w4_x(i);
  return x;
}
xt::xtensor<double, 1> w4_make_y() {
  xt::xtensor<double, 1> y = xt::xtensor<double, 1>::from_shape({w4_cols});
  for (std::size_t j = 0; j < y.size(); ++j) y.data()[j] = w4_y(j);
  return y;
}

void W4_fusor(State& st) {
  auto x = fusor::shared(w4_make_x());
  auto y = fusor::shared(w4_make_y());
  auto o = fusor::shared(xt::xtensor<double, 2>(xt::zeros<double>({w4_rows, w4_cols})));
  auto run = [&] { fusor::assign(o, fusor::exp(2 * x * y + y)); };
  run();
  if (!check(st, data_of(o), w4_rows * w4_cols, w4_expected)) return;
  fusor_loop(st, o, run);
  set_bw(st, w4_bytes());
  set_ns_per_elem(st, double(w4_rows * w4_cols));
}

/// Reference loops: scalar std::exp, xsimd with fusor's flags, xsimd with -mprefer-vector-width=512.
enum class variant { scalar, xsimd, xsimd_w512 };

template <variant V>
void W4_hand(State& st) {
  auto x = w4_make_x();
  auto y = w4_make_y();
  xt::xtensor<double, 2> o = xt::zeros<double>({w4_rows, w4_cols});
  auto run = [&] {
    if constexpr (V == variant::xsimd) ref_same::w4_xsimd(o.data(), x.data(), y.data(), w4_rows, w4_cols);
    else if constexpr (V == variant::xsimd_w512) ref_w512::w4_xsimd(o.data(), x.data(), y.data(), w4_rows, w4_cols);
    else ref::w4_scalar(o.data(), x.data(), y.data(), w4_rows, w4_cols);
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), w4_rows * w4_cols, w4_expected)) return;
  plain_loop(st, run);
  set_bw(st, w4_bytes());
  set_ns_per_elem(st, double(w4_rows * w4_cols));
}

void W4_eigen(State& st) {
  using M = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using R = Eigen::Array<double, 1, Eigen::Dynamic>;
  M x(w4_rows, w4_cols), o(w4_rows, w4_cols);
  R y(w4_cols);
  for (std::size_t i = 0; i < w4_rows * w4_cols; ++i) x.data()[i] = w4_x(i);
  for (std::size_t j = 0; j < w4_cols; ++j) y.data()[j] = w4_y(j);
  o.setZero();
  auto run = [&] {
    o = (((2.0 * x).rowwise() * y).rowwise() + y).exp();
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), w4_rows * w4_cols, w4_expected)) return;
  plain_loop(st, run);
  set_bw(st, w4_bytes());
  set_ns_per_elem(st, double(w4_rows * w4_cols));
}

// ------------------------------------------------------------------ W5: transcendentals in cache

enum class w5k { exp, log, tanh, sigmoid, mixed };
constexpr const char* w5_name(w5k k) {
  return k == w5k::exp ? "exp" : k == w5k::log ? "log" : k == w5k::tanh ? "tanh" : k == w5k::sigmoid ? "sigmoid" : "mixed";
}
constexpr ref::unary w5_unary(w5k k) {
  return k == w5k::exp ? ref::unary::exp : k == w5k::log ? ref::unary::log : k == w5k::tanh ? ref::unary::tanh : ref::unary::sigmoid;
}
// Inputs: a in [-3, 3) (log: [0.5, 1.5)), b in [0.5, 1.5), c in [0.5, 1.5).
double w5_scale(w5k k) { return k == w5k::log ? 1.0 : 6.0; }
double w5_shift(w5k k) { return k == w5k::log ? 0.0 : -6.0; }
double w5_expected(w5k k, std::size_t i) {
  const double a = input<double>(0, i, w5_scale(k), w5_shift(k));
  switch (k) {
    case w5k::exp: return std::exp(a);
    case w5k::log: return std::log(a);
    case w5k::tanh: return std::tanh(a);
    case w5k::sigmoid: return 1.0 / (1.0 + std::exp(-a));
    case w5k::mixed: return std::exp(a) * input<double>(1, i) + std::log1p(input<double>(2, i));
  }
  return 0;
}
double w5_bytes(w5k k, std::size_t n) { return double(n) * sizeof(double) * (k == w5k::mixed ? 4 : 2); }

template <w5k K>
void W5_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = fusor::shared(make_array<double>(n, 0, w5_scale(K), w5_shift(K)));
  auto b = fusor::shared(make_array<double>(n, 1));
  auto c = fusor::shared(make_array<double>(n, 2));
  auto o = fusor::shared(make_array<double>(n, -1));
  auto run = [&] {
    if constexpr (K == w5k::exp) fusor::assign(o, fusor::exp(a));
    else if constexpr (K == w5k::log) fusor::assign(o, fusor::log(a));
    else if constexpr (K == w5k::tanh) fusor::assign(o, fusor::tanh(a));
    else if constexpr (K == w5k::sigmoid) fusor::assign(o, fusor::sigmoid(a));
    else fusor::assign(o, fusor::exp(a) * b + fusor::log1p(c));
  };
  run();
  if (!check(st, data_of(o), n, [](std::size_t i) { return w5_expected(K, i); })) return;
  fusor_loop(st, o, run);
  set_bw(st, w5_bytes(K, n));
  set_ns_per_elem(st, double(n));
}

template <w5k K, variant V>
void W5_ref(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = make_array<double>(n, 0, w5_scale(K), w5_shift(K));
  auto b = make_array<double>(n, 1), c = make_array<double>(n, 2), o = make_array<double>(n, -1);
  auto run = [&] {
    if constexpr (K == w5k::mixed) {
      if constexpr (V == variant::xsimd) ref_same::w5_mixed_xsimd(o.data(), a.data(), b.data(), c.data(), n);
      else if constexpr (V == variant::xsimd_w512) ref_w512::w5_mixed_xsimd(o.data(), a.data(), b.data(), c.data(), n);
      else ref::w5_mixed_scalar(o.data(), a.data(), b.data(), c.data(), n);
    } else {
      if constexpr (V == variant::xsimd) ref_same::w5_xsimd(w5_unary(K), o.data(), a.data(), n);
      else if constexpr (V == variant::xsimd_w512) ref_w512::w5_xsimd(w5_unary(K), o.data(), a.data(), n);
      else ref::w5_scalar(w5_unary(K), o.data(), a.data(), n);
    }
    benchmark::DoNotOptimize(o.data());
  };
  run();
  if (!check(st, o.data(), n, [](std::size_t i) { return w5_expected(K, i); })) return;
  plain_loop(st, run);
  set_bw(st, w5_bytes(K, n));
  set_ns_per_elem(st, double(n));
}

// ------------------------------------------------------------------ registration

std::vector<std::int64_t> sizes_from_env() {
  std::vector<std::int64_t> sizes{1000, 4096, 1 << 16, 1 << 20, 1 << 26};
  if (const char* s = std::getenv("BENCH_SIZES"); s && *s) {
    sizes.clear();
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
      if (!item.empty()) sizes.push_back(std::stoll(item));
  }
  return sizes;
}

double stat_max(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

using fn_t = void (*)(State&);

benchmark::internal::Benchmark* reg(const std::string& name, fn_t fn, const std::vector<std::int64_t>& sizes) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
  for (auto n : sizes) b->Arg(n);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
  return b;
}

template <class T, sk K>
void register_w1(const std::vector<std::int64_t>& sizes) {
  const std::string base = std::string("W1.") + sk_name(K) + "/" + dtype_name<T>() + "/";
  reg(base + "fusor", W1_fusor<T, K>, sizes);
  reg(base + "hand", W1_hand<T, K>, sizes);
  reg(base + "xtensor", W1_xtensor<T, K>, sizes);
  if constexpr (K == sk::copy) reg(base + "memcpy", W1_memcpy<T>, sizes);
}

template <class T>
void register_dtype(const std::vector<std::int64_t>& sizes) {
  register_w1<T, sk::copy>(sizes);
  register_w1<T, sk::scale>(sizes);
  register_w1<T, sk::add>(sizes);
  register_w1<T, sk::triad>(sizes);
  {
    auto* b = benchmark::RegisterBenchmark((std::string("W1.triad/") + dtype_name<T>() + "/stream").c_str(), W1_stream<T>);
    for (auto n : sizes) b->Arg(n);
    b->UseManualTime()->Unit(benchmark::kMicrosecond)->ComputeStatistics("max", stat_max);
  }
  const std::string w2 = std::string("W2/") + dtype_name<T>() + "/";
  reg(w2 + "fusor", W2_fusor<T>, sizes);
  reg(w2 + "hand", W2_hand<T>, sizes);
  reg(w2 + "xtensor", W2_xtensor<T>, sizes);
  reg(w2 + "eigen", W2_eigen<T>, sizes);
}

template <w5k K>
void register_w5() {
  const std::string base = std::string("W5.") + w5_name(K) + "/double/";
  const std::vector<std::int64_t> n{4096};
  reg(base + "fusor", W5_fusor<K>, n);
  reg(base + "xsimd", W5_ref<K, variant::xsimd>, n);
  reg(base + "xsimd_w512", W5_ref<K, variant::xsimd_w512>, n);
  reg(base + "scalar", W5_ref<K, variant::scalar>, n);
}

void register_all() {
  const auto sizes = sizes_from_env();
  register_dtype<double>(sizes);
  register_dtype<float>(sizes);
  reg("W2/double/eager", W2_eager<double>, sizes);
  reg("W3/double/fusor", W3_fusor<double>, sizes);
  reg("W3/double/hand", W3_hand<double>, sizes);

  const std::string w4 = "W4/double/";
  const std::string shape = "/" + std::to_string(w4_rows) + "x" + std::to_string(w4_cols);
  for (auto [impl, fn] : {std::pair<const char*, fn_t>{"fusor", W4_fusor}, {"scalar", W4_hand<variant::scalar>},
                          {"xsimd", W4_hand<variant::xsimd>}, {"xsimd_w512", W4_hand<variant::xsimd_w512>},
                          {"eigen", W4_eigen}})
    benchmark::RegisterBenchmark((w4 + impl + shape).c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);

  register_w5<w5k::exp>();
  register_w5<w5k::log>();
  register_w5<w5k::tanh>();
  register_w5<w5k::sigmoid>();
  register_w5<w5k::mixed>();
}

#ifndef FUSOR_BENCH_FLAGS
#define FUSOR_BENCH_FLAGS "?"
#endif

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::AddCustomContext("compiler", "g++ " __VERSION__);
  benchmark::AddCustomContext("flags", FUSOR_BENCH_FLAGS);
  benchmark::AddCustomContext("xsimd_arch", xsimd::default_arch::name());
  benchmark::AddCustomContext("xsimd_double_lanes", std::to_string(xsimd::batch<double>::size));
  benchmark::AddCustomContext("xsimd", std::to_string(XSIMD_VERSION_MAJOR) + "." + std::to_string(XSIMD_VERSION_MINOR) +
                                           "." + std::to_string(XSIMD_VERSION_PATCH));
  benchmark::AddCustomContext("xtensor", std::to_string(XTENSOR_VERSION_MAJOR) + "." +
                                             std::to_string(XTENSOR_VERSION_MINOR) + "." +
                                             std::to_string(XTENSOR_VERSION_PATCH));
  benchmark::AddCustomContext("eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                                           "." + std::to_string(EIGEN_MINOR_VERSION));
  benchmark::AddCustomContext("fusor", FUSOR_VERSION_STRING);  // fusor/version.hpp
  benchmark::AddCustomContext("eigen_simd", Eigen::SimdInstructionSetsInUse());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
