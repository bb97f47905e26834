// The stable rewrites (rewrite/stable.hpp) and softmax / log_softmax /
// logsumexp: each rewrite is shown by the plan, the naive form over- or
// underflows where the rewritten one does not (the naive one is built with
// fusor::no_rewrites), and the gradients are finite where the naive ones are
// 0 / 0.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include <xtensor/xmath.hpp>

#include <fusor/fusor.hpp>

namespace {
const xt::xtensor<double, 1> wide{-800.0, -40.0, -1.0, 0.0, 1.0, 40.0, 800.0};

bool all_finite(const xt::xtensor<double, 1>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}
}  // namespace

TEST_CASE("log(sigmoid(x)) -> -softplus(-x): finite where the naive form is log(0)") {
  fusor::vector<double> x{"x"};
  const auto e = fusor::log(fusor::sigmoid(x));
  CHECK(fusor::stabilize(e).str() == "-softplus(-x)");
  auto naive = fusor::function(fusor::no_rewrites, fusor::inputs(x), fusor::outputs(e));
  auto stable = fusor::function(fusor::inputs(x), fusor::outputs(e));
  const xt::xtensor<double, 1> n = naive(wide);
  const xt::xtensor<double, 1> s = stable(wide);
  CHECK(std::isinf(n(0)));  // sigmoid(-800) is 0 in double
  CHECK(all_finite(s));
  CHECK(s(0) == doctest::Approx(-800.0));
  CHECK(s(3) == doctest::Approx(-std::log(2.0)));
  CHECK(stable.plan().find("softplus") != std::string::npos);
  CHECK(naive.plan().find("sigmoid") != std::string::npos);
}

TEST_CASE("log(1 - sigmoid(x)) -> -softplus(x); another constant is left as written") {
  fusor::vector<double> x{"x"};
  const auto e = fusor::log(1 - fusor::sigmoid(x));
  auto naive = fusor::function(fusor::no_rewrites, fusor::inputs(x), fusor::outputs(e));
  auto stable = fusor::function(fusor::inputs(x), fusor::outputs(e));
  const xt::xtensor<double, 1> n = naive(wide);
  const xt::xtensor<double, 1> s = stable(wide);
  CHECK(std::isinf(n(6)));  // 1 - sigmoid(800) is 0
  CHECK(all_finite(s));
  CHECK(s(6) == doctest::Approx(-800.0));
  CHECK(stable.plan().find("softplus") != std::string::npos);
  // log(2 - sigmoid(x)) has no stable form here: computed as written
  const auto other = fusor::stabilize(fusor::log(2 - fusor::sigmoid(x)));
  CHECK(other.str().find("as_written(log(2 - sigmoid(x)))") != std::string::npos);
  const xt::xtensor<double, 1> o = fusor::eval(fusor::log(2 - fusor::sigmoid(x)), x = wide);
  CHECK(o(0) == doctest::Approx(std::log(2.0)));
}

TEST_CASE("log(1 + x) -> log1p(x) and exp(x) - 1 -> expm1(x): no cancellation for tiny x") {
  fusor::vector<double> x{"x"};
  const xt::xtensor<double, 1> tiny{1e-20, -1e-18, 3e-17};
  auto naive = fusor::function(fusor::no_rewrites, fusor::inputs(x),
                               fusor::outputs(fusor::log(1 + x), fusor::log(x + 1), fusor::exp(x) - 1));
  auto stable = fusor::function(fusor::inputs(x),
                                fusor::outputs(fusor::log(1 + x), fusor::log(x + 1), fusor::exp(x) - 1));
  auto [n1, n2, n3] = naive(tiny);
  auto [s1, s2, s3] = stable(tiny);
  CHECK(n1(0) == 0.0);  // 1 + 1e-20 rounds to 1
  CHECK(n3(0) == 0.0);
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    CHECK(s1(i) == doctest::Approx(tiny(i)).epsilon(1e-12));
    CHECK(s2(i) == doctest::Approx(tiny(i)).epsilon(1e-12));
    CHECK(s3(i) == doctest::Approx(tiny(i)).epsilon(1e-12));
  }
  CHECK(fusor::stabilize(fusor::log(1 + x)).str().find("log1p(x)") == 0);
  CHECK(fusor::stabilize(fusor::exp(x) - 1).str().find("expm1(x)") == 0);
  const std::string plan = stable.plan();
  CHECK(plan.find("log1p") != std::string::npos);
  CHECK(plan.find("expm1") != std::string::npos);
}

TEST_CASE("log(exp(x)) -> x, and log(sum(exp(x))) -> a max-shifted log-sum-exp") {
  fusor::vector<double> x{"x"};
  CHECK(fusor::stabilize(fusor::log(fusor::exp(x))).str() == "x");
  const auto lse = fusor::log(fusor::sum(fusor::exp(x)));
  auto naive = fusor::function(fusor::no_rewrites, fusor::inputs(x), fusor::outputs(lse, fusor::log(fusor::exp(x))));
  auto stable = fusor::function(fusor::inputs(x), fusor::outputs(lse, fusor::log(fusor::exp(x))));
  auto [n, nx] = naive(wide);
  auto [s, sx] = stable(wide);
  CHECK(std::isinf(n));  // exp(800) overflows
  CHECK(std::isinf(nx(6)));
  CHECK(s == doctest::Approx(800.0));
  CHECK(sx == wide);
  CHECK(stable.plan().find("max(") != std::string::npos);
  // over one axis, with keepdims
  fusor::matrix<double> m{"m"};
  const xt::xtensor<double, 2> mv{{1000.0, 1000.0}, {-5.0, 0.0}};
  const xt::xtensor<double, 2> r = fusor::eval(fusor::log(fusor::sum(fusor::exp(m), 1, fusor::keepdims)), m = mv);
  CHECK(r(0, 0) == doctest::Approx(1000.0 + std::log(2.0)));
  CHECK(r(1, 0) == doctest::Approx(std::log(std::exp(-5.0) + 1.0)));
  // stabilizing twice changes nothing
  static_assert(std::is_same_v<fusor::stabilized_t<decltype(fusor::stabilize(lse))>, decltype(fusor::stabilize(lse))>);
}

TEST_CASE("softmax, log_softmax and logsumexp: values, stability and gradients") {
  fusor::matrix<double> z{"z"};
  const xt::xtensor<double, 2> zv{{1.0, 2.0, 3.0}, {1000.0, 0.0, -1000.0}};
  auto f = fusor::function(fusor::inputs(z), fusor::outputs(fusor::softmax(z), fusor::log_softmax(z, 1),
                                                             fusor::logsumexp(z, -1), fusor::logsumexp(z)));
  auto [sm, lsm, lse, all] = f(zv);
  const double d = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(sm(0, 2) == doctest::Approx(std::exp(3.0) / d));
  CHECK(sm(1, 0) == doctest::Approx(1.0));
  CHECK(sm(1, 2) == 0.0);
  CHECK(lsm(0, 0) == doctest::Approx(1.0 - std::log(d)));
  CHECK(lsm(1, 2) == doctest::Approx(-2000.0));
  CHECK(lse(0) == doctest::Approx(std::log(d)));
  CHECK(lse(1) == doctest::Approx(1000.0));
  CHECK(all == doctest::Approx(1000.0));
  // the gradient of logsumexp is softmax; of sum(log_softmax * t), t - softmax * sum(t)
  auto w = fusor::shared(xt::xtensor<double, 1>{0.5, -1.0, 2.0}, "w");
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::logsumexp(w, 0), w));
  const xt::xtensor<double, 1> sw = fusor::eval(fusor::softmax(w));
  CHECK(xt::allclose(g, sw));
  auto t = fusor::shared(xt::xtensor<double, 1>{0.0, 1.0, 0.0}, "t");
  const xt::xtensor<double, 1> gl = fusor::eval(fusor::grad(fusor::sum(fusor::log_softmax(w) * t), w));
  CHECK(xt::allclose(gl, t.get_value() - sw));
  // and of a huge logit: finite
  auto big = fusor::shared(xt::xtensor<double, 1>{1000.0, 0.0}, "big");
  const xt::xtensor<double, 1> gb = fusor::eval(fusor::grad(fusor::logsumexp(big, 0), big));
  CHECK(gb == xt::xtensor<double, 1>{1.0, 0.0});
}

TEST_CASE("the gradient of a naive cross-entropy is finite: grad differentiates the rewritten cost") {
  fusor::vector<double> x{"x"};
  auto w = fusor::shared(xt::xtensor<double, 0>(1.0), "w");
  fusor::vector<double> y{"y"};
  const auto p = fusor::sigmoid(x * w);
  const auto cost = fusor::sum(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p));
  const xt::xtensor<double, 1> xv{-800.0, 800.0};
  const xt::xtensor<double, 1> yv{1.0, 0.0};  // both confidently wrong
  const double stable = fusor::eval(fusor::grad(cost, w), x = xv, y = yv);
  const double naive = fusor::eval(fusor::grad(fusor::no_rewrites, cost, w), x = xv, y = yv);
  CHECK(stable == doctest::Approx(1600.0));  // sum of (p - y) x: (0 - 1)(-800) + (1 - 0) 800
  CHECK(!std::isfinite(naive));
  const double c = fusor::eval(cost, x = xv, y = yv);
  CHECK(c == doctest::Approx(1600.0));
}
