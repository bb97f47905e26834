// bench/bench_grad.cpp — a training step with the gradients by fusor::grad
// against the same step with the gradients written by hand, in one binary:
//
//   LR   the Theano tutorial's logistic regression: 400 samples x 784
//        features, double, cross-entropy + L2, w and b updated
//   MLP  a two-layer perceptron 784-128-10, float, ReLU, softmax
//        cross-entropy, minibatch 64 passed as an argument, four updates
//
// Each function is the whole step (cost out, parameters updated in place);
// both variants start from the same parameters and are checked to compute
// the same cost and updates before timing. SUM0: the sums over the leading
// axis a backward pass makes for a bias, against hand loops; SHORT_MAX,
// SHORT_SUMEXP, SUM0_COL: reductions whose leaves do not step by one element
// along the row (a softmax's over ten classes, a column factor). Counters:
// arena_bytes (the plan's temporaries) and news_per_call (allocations in
// steady state). Measured, never asserted.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include <benchmark/benchmark.h>

#include <fusor/fusor.hpp>

#include "alloc_count.hpp"

namespace {

using benchmark::Counter;
using benchmark::State;

template <class F, class... A>
void run_steps(State& st, F& f, const A&... args) {
  for (int i = 0; i < 3; ++i) (void)f(args...);  // plans built, arenas sized
  const std::size_t news0 = bench_operator_new_calls();
  for (auto _ : st) {
    auto c = f(args...);
    benchmark::DoNotOptimize(c);
  }
  st.counters["news_per_call"] =
      Counter(static_cast<double>(bench_operator_new_calls() - news0) / static_cast<double>(st.iterations()));
  st.counters["arena_bytes"] = Counter(static_cast<double>(f.memory().arena_bytes));
}

// ---------------------------------------------------------------- logistic regression

struct lr_data {
  static constexpr std::size_t N = 400, feats = 784;
  xt::xtensor<double, 2> x;
  xt::xtensor<double, 1> y, w0;
  lr_data() {
    std::mt19937_64 rng(1234);
    std::normal_distribution<double> normal;
    std::bernoulli_distribution coin;
    x = xt::xtensor<double, 2>::from_shape({N, feats});
    y = xt::xtensor<double, 1>::from_shape({N});
    w0 = xt::xtensor<double, 1>::from_shape({feats});
    for (auto& v : x) v = normal(rng);
    for (auto& v : y) v = coin(rng) ? 1.0 : 0.0;
    for (auto& v : w0) v = normal(rng) * 0.01;
  }
};
const lr_data& lr() {
  static const lr_data d;
  return d;
}

/// train(x, y) -> cost, with w, b updated; by fusor::grad or by hand.
template <bool ByGrad>
auto make_lr(fusor::shared<xt::xtensor<double, 1>>& w, fusor::shared<double>& b) {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto p = fusor::sigmoid(fusor::dot(x, w) + b);
  auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p)) + 0.01 * fusor::sum(w * w);
  auto step = [&](auto gw, auto gb) {
    return fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)));
  };
  if constexpr (ByGrad) {
    auto [gw, gb] = fusor::grad(cost, w, b);
    return step(gw, gb);
  } else {
    return step(fusor::dot(fusor::transpose(x), p - y) / double(lr_data::N) + 0.02 * w, fusor::mean(p - y));
  }
}

template <bool ByGrad>
void BM_lr(State& st) {
  auto w = fusor::shared(lr().w0, "w");
  auto b = fusor::shared(0.0, "b");
  auto f = make_lr<ByGrad>(w, b);
  // the same first step both ways
  {
    auto w2 = fusor::shared(lr().w0, "w");
    auto b2 = fusor::shared(0.0, "b");
    auto g = make_lr<!ByGrad>(w2, b2);
    const double c1 = f(lr().x, lr().y).value(), c2 = g(lr().x, lr().y).value();
    const xt::xtensor<double, 1> d = w.get_value() - w2.get_value();
    if (std::abs(c1 - c2) > 1e-12 * std::abs(c2) || xt::amax(xt::abs(d))() > 1e-12)
      throw std::runtime_error("LR: the gradient by fusor::grad differs from the hand-written one");
  }
  run_steps(st, f, lr().x, lr().y);
}

// ---------------------------------------------------------------- two-layer perceptron

struct mlp_data {
  static constexpr std::size_t B = 64, D = 784, H = 128, C = 10;
  xt::xtensor<float, 2> x, y, W1, W2;
  xt::xtensor<float, 1> b1, b2;
  mlp_data() {
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal;
    x = xt::xtensor<float, 2>::from_shape({B, D});
    y = xt::zeros<float>({B, C});
    W1 = xt::xtensor<float, 2>::from_shape({D, H});
    W2 = xt::xtensor<float, 2>::from_shape({H, C});
    for (auto& v : x) v = normal(rng);
    for (std::size_t i = 0; i < B; ++i) y(i, i % C) = 1.0f;
    for (auto& v : W1) v = normal(rng) * std::sqrt(2.0f / D);
    for (auto& v : W2) v = normal(rng) * std::sqrt(1.0f / H);
    b1 = xt::zeros<float>({H});
    b2 = xt::zeros<float>({C});
  }
};
const mlp_data& mlp() {
  static const mlp_data d;
  return d;
}

struct mlp_params {
  fusor::shared<xt::xtensor<float, 2>> W1 = fusor::shared(mlp().W1, "W1");
  fusor::shared<xt::xtensor<float, 1>> b1 = fusor::shared(mlp().b1, "b1");
  fusor::shared<xt::xtensor<float, 2>> W2 = fusor::shared(mlp().W2, "W2");
  fusor::shared<xt::xtensor<float, 1>> b2 = fusor::shared(mlp().b2, "b2");
};

template <bool ByGrad>
auto make_mlp(mlp_params& m) {
  fusor::matrix<float> x{"x"};
  fusor::matrix<float> y{"y"};
  constexpr float lr = 0.1f;
  auto a1 = fusor::dot(x, m.W1) + m.b1;
  auto h = fusor::maximum(a1, 0.0f);
  auto z = fusor::dot(h, m.W2) + m.b2;
  auto log_p = fusor::log_softmax(z, 1);
  auto cost = -fusor::mean(fusor::sum(y * log_p, 1));
  auto step = [&](auto gW1, auto gb1, auto gW2, auto gb2) {
    return fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                           fusor::updates(fusor::update(m.W1, m.W1 - lr * gW1), fusor::update(m.b1, m.b1 - lr * gb1),
                                          fusor::update(m.W2, m.W2 - lr * gW2), fusor::update(m.b2, m.b2 - lr * gb2)));
  };
  if constexpr (ByGrad) {
    auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, m.W1, m.b1, m.W2, m.b2);
    return step(gW1, gb1, gW2, gb2);
  } else {
    auto dz = (fusor::exp(log_p) - y) / float(mlp_data::B);
    auto da1 = fusor::where(a1 > 0.0f, fusor::dot(dz, fusor::transpose(m.W2)), 0.0f);
    return step(fusor::dot(fusor::transpose(x), da1), fusor::sum(da1, 0), fusor::dot(fusor::transpose(h), dz),
                fusor::sum(dz, 0));
  }
}

template <bool ByGrad>
void BM_mlp(State& st) {
  mlp_params m;
  auto f = make_mlp<ByGrad>(m);
  {
    mlp_params m2;
    auto g = make_mlp<!ByGrad>(m2);
    const float c1 = f(mlp().x, mlp().y).value(), c2 = g(mlp().x, mlp().y).value();
    const xt::xtensor<float, 2> d = m.W1.get_value() - m2.W1.get_value();
    if (std::abs(c1 - c2) > 1e-5f * std::abs(c2) || xt::amax(xt::abs(d))() > 1e-5f)
      throw std::runtime_error("MLP: the gradient by fusor::grad differs from the hand-written one");
  }
  run_steps(st, f, mlp().x, mlp().y);
}

// ---------------------------------------------------------------- sums over the leading axis

// The reductions a backward pass makes for a bias: a (rows, cols) array summed
// to (cols,), plain and behind the ReLU's mask (b1's gradient in the
// perceptron: sum(where(a1 > 0, g, 0), 0)), against the loops a person writes.
// The hand loops accumulate a whole row at a time, which GCC vectorises along
// the kept axis.
struct sum0_data {
  xt::xtensor<float, 2> a, g;
  xt::xtensor<float, 1> b;
  sum0_data(std::size_t rows, std::size_t cols) {
    std::mt19937_64 rng(11);
    std::normal_distribution<float> normal;
    a = xt::xtensor<float, 2>::from_shape({rows, cols});
    g = xt::xtensor<float, 2>::from_shape({rows, cols});
    b = xt::xtensor<float, 1>::from_shape({cols});
    for (auto& v : a) v = normal(rng);
    for (auto& v : g) v = normal(rng);
    for (auto& v : b) v = normal(rng);
  }
};

[[gnu::noinline]] void sum0_hand(float* __restrict out, const float* __restrict a, std::size_t rows, std::size_t cols) {
  for (std::size_t c = 0; c < cols; ++c) out[c] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c] += a[r * cols + c];
}
[[gnu::noinline]] void sum0_relu_hand(float* __restrict out, const float* __restrict a, const float* __restrict b,
                                      const float* __restrict g, std::size_t rows, std::size_t cols) {
  for (std::size_t c = 0; c < cols; ++c) out[c] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c] += a[r * cols + c] + b[c] > 0.0f ? g[r * cols + c] : 0.0f;
}

/// Masked: the relu-gated sum; else the plain one.
template <bool Masked, bool Fusor>
void BM_sum0(State& st) {
  const auto rows = static_cast<std::size_t>(st.range(0)), cols = static_cast<std::size_t>(st.range(1));
  const sum0_data d(rows, cols);
  if constexpr (Fusor) {
    auto a = fusor::shared(d.a, "a");
    auto g = fusor::shared(d.g, "g");
    auto b = fusor::shared(d.b, "b");
    auto f = [&] {
      if constexpr (Masked) return fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(
                                fusor::sum(fusor::where(a + b > 0.0f, g, 0.0f), 0), fusor::borrow)));
      else return fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::sum(a, 0), fusor::borrow)));
    }();
    run_steps(st, f);
  } else {
    std::vector<float> out(cols);
    for (auto _ : st) {
      if constexpr (Masked) sum0_relu_hand(out.data(), d.a.data(), d.b.data(), d.g.data(), rows, cols);
      else sum0_hand(out.data(), d.a.data(), rows, cols);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) *
                       static_cast<std::int64_t>(rows * cols * sizeof(float) * (Masked ? 2 : 1)));
}

// ---------------------------------------------------------------- reductions whose leaves are not dense

// Reductions in which a leaf does not step by one element along the row, so
// the loops read it in the general (unaligned) mode: a softmax's max and
// sum(exp(z - m)) over ten classes per sample (rows shorter than a batch: the
// loop runs along the samples and reads z ten elements apart), and a sum over
// the leading axis of x * c with c a column (broadcast along the row). They
// are why the reductions keep blocks of eight batches in that mode too (at
// the cost of compile time: docs/compile-time.md), against the loops a person
// writes.
struct rows_data {
  xt::xtensor<float, 2> z, m, x, c;  // z (n, 10), m (n, 1); x (n, cols), c (n, 1)
  rows_data(std::size_t n, std::size_t cols) {
    std::mt19937_64 rng(13);
    std::normal_distribution<float> normal;
    z = xt::xtensor<float, 2>::from_shape({n, 10});
    m = xt::xtensor<float, 2>::from_shape({n, 1});
    x = xt::xtensor<float, 2>::from_shape({n, cols});
    c = xt::xtensor<float, 2>::from_shape({n, 1});
    for (auto* a : {&z, &m, &x, &c})
      for (auto& v : *a) v = normal(rng);
  }
};

[[gnu::noinline]] void short_max_hand(float* __restrict out, const float* __restrict z, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float best = z[i * 10];
    for (std::size_t j = 1; j < 10; ++j) best = std::max(best, z[i * 10 + j]);
    out[i] = best;
  }
}
[[gnu::noinline]] void short_sumexp_hand(float* __restrict out, const float* __restrict z,
                                         const float* __restrict m, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float s = 0.0f;
    for (std::size_t j = 0; j < 10; ++j) s += std::exp(z[i * 10 + j] - m[i]);
    out[i] = s;
  }
}
[[gnu::noinline]] void sum0_col_hand(float* __restrict out, const float* __restrict x, const float* __restrict c,
                                     std::size_t rows, std::size_t cols) {
  for (std::size_t j = 0; j < cols; ++j) out[j] = 0.0f;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < cols; ++j) out[j] += x[r * cols + j] * c[r];
}

enum class rows_case { short_max, short_sumexp, sum0_col };

template <rows_case Case, bool Fusor>
void BM_rows(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto cols = Case == rows_case::sum0_col ? static_cast<std::size_t>(st.range(1)) : std::size_t{10};
  const rows_data d(n, Case == rows_case::sum0_col ? cols : 1);
  std::vector<float> out(Case == rows_case::sum0_col ? cols : n);
  auto hand = [&] {
    if constexpr (Case == rows_case::short_max) short_max_hand(out.data(), d.z.data(), n);
    else if constexpr (Case == rows_case::short_sumexp) short_sumexp_hand(out.data(), d.z.data(), d.m.data(), n);
    else sum0_col_hand(out.data(), d.x.data(), d.c.data(), n, cols);
  };
  if constexpr (Fusor) {
    auto z = fusor::shared(d.z, "z");
    auto m = fusor::shared(d.m, "m");
    auto x = fusor::shared(d.x, "x");
    auto c = fusor::shared(d.c, "c");
    auto f = [&] {
      if constexpr (Case == rows_case::short_max)
        return fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::max(z, 1), fusor::borrow)));
      else if constexpr (Case == rows_case::short_sumexp)
        return fusor::function(fusor::inputs(),
                               fusor::outputs(fusor::Out(fusor::sum(fusor::exp(z - m), 1), fusor::borrow)));
      else
        return fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::sum(x * c, 0), fusor::borrow)));
    }();
    hand();  // the check, once: the same values as the loops (to float rounding)
    const auto got = f();
    for (std::size_t i = 0; i < out.size(); ++i)
      if (std::abs(got.flat(i) - out[i]) > 1e-4f * (1.0f + std::abs(out[i]))) {
        st.SkipWithError("fusor's reduction differs from the hand loop");
        return;
      }
    run_steps(st, f);
  } else {
    for (auto _ : st) {
      hand();
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n * cols * sizeof(float)));
}

}  // namespace

BENCHMARK(BM_rows<rows_case::short_max, false>)->Name("SHORT_MAX/float/hand")->Arg(64)->Arg(512)->Arg(4096);
BENCHMARK(BM_rows<rows_case::short_max, true>)->Name("SHORT_MAX/float/fusor")->Arg(64)->Arg(512)->Arg(4096);
BENCHMARK(BM_rows<rows_case::short_sumexp, false>)->Name("SHORT_SUMEXP/float/hand")->Arg(64)->Arg(512)->Arg(4096);
BENCHMARK(BM_rows<rows_case::short_sumexp, true>)->Name("SHORT_SUMEXP/float/fusor")->Arg(64)->Arg(512)->Arg(4096);
BENCHMARK(BM_rows<rows_case::sum0_col, false>)->Name("SUM0_COL/float/hand")->Args({64, 128})->Args({1024, 1024});
BENCHMARK(BM_rows<rows_case::sum0_col, true>)->Name("SUM0_COL/float/fusor")->Args({64, 128})->Args({1024, 1024});
BENCHMARK(BM_sum0<false, false>)->Name("SUM0/float/hand")->Args({64, 128})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sum0<false, true>)->Name("SUM0/float/fusor")->Args({64, 128})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sum0<true, false>)->Name("SUM0_RELU/float/hand")->Args({64, 128})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sum0<true, true>)->Name("SUM0_RELU/float/fusor")->Args({64, 128})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_lr<false>)->Name("LR/double/hand/400x784")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_lr<true>)->Name("LR/double/grad/400x784")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<false>)->Name("MLP/float/hand/64x784-128-10")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mlp<true>)->Name("MLP/float/grad/64x784-128-10")->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
