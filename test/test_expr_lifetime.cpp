// Expressions are values: safe in `auto` variables, safe to return from the
// function that built them from locals, safe to copy and reuse. Run under
// AddressSanitizer in CI. Modelled on xtensor #1932, #2597, #2871, Eigen
// GitLab #680 and Fastor #38 (the dangling-reference reports of those libraries).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <type_traits>

#include <fusor/fusor.hpp>

namespace {
// xtensor #1932: a helper returning an expression over a local temporary.
auto py_div(fusor::vector<double> x) {
  auto local = fusor::shared(xt::xarray<double>{2.0, 4.0}, "local");
  return x / local;  // `local` is a handle: the expression keeps the variable alive
}

// xtensor #2597: a member function capturing a local scalar.
struct scaler {
  double factor = 3.0;
  auto scaled(const fusor::vector<double>& x) const {
    const auto c = factor;  // a local constant, captured by value
    return x * c;
  }
};

// Fastor #38: `auto aaa = KK*KK; return aaa;` with KK local.
auto square_of_local() {
  auto KK = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, "KK");
  auto aaa = KK * KK;
  return aaa;
}

// Eigen GitLab #680: `auto res = retVec().transpose()`.
fusor::shared<xt::xtensor<double, 2>> ret_mat() { return fusor::shared(xt::xtensor<double, 2>{{1, 2}, {3, 4}}); }

// xtensor #2871: log-softmax with `auto` reducer intermediates.
auto log_softmax_by_hand(const fusor::vector<double>& x) {
  auto m = fusor::max(x);
  auto shifted = x - m;
  auto lse = fusor::log(fusor::sum(fusor::exp(shifted)));
  return shifted - lse;
}
}  // namespace

TEST_CASE("nodes hold no references") {
  fusor::vector<double> x{"x"};
  auto e = (x + 1.0) * fusor::exp(x);
  using args = std::remove_cvref_t<decltype(e.args())>;
  static_assert(!std::is_reference_v<std::tuple_element_t<0, args>>);
  static_assert(!std::is_reference_v<std::tuple_element_t<1, args>>);
  CHECK(e.str() == "(x + 1) * exp(x)");
}

TEST_CASE("returning an expression built from a local shared variable (xtensor #1932)") {
  fusor::vector<double> x{"x"};
  auto e = py_div(x);
  auto r = fusor::eval(e, x = xt::xarray<double>{1.0, 1.0});
  CHECK(r == xt::xarray<double>{0.5, 0.25});
}

TEST_CASE("a local scalar is captured by value (xtensor #2597)") {
  fusor::vector<double> x{"x"};
  auto e = scaler{}.scaled(x);
  CHECK(fusor::eval(e, x = xt::xarray<double>{1.0, 2.0}) == xt::xarray<double>{3.0, 6.0});
}

TEST_CASE("auto of a product of locals, returned (Fastor #38)") {
  auto e = square_of_local();
  CHECK(fusor::eval(e) == xt::xtensor<double, 1>{1.0, 4.0, 9.0});
}

TEST_CASE("transpose of a returned temporary (Eigen #680)") {
  auto res = fusor::transpose(ret_mat());
  CHECK(fusor::eval(res) == xt::xtensor<double, 2>{{1, 3}, {2, 4}});
}

TEST_CASE("auto reducer intermediates (xtensor #2871)") {
  fusor::vector<double> x{"x"};
  auto e = log_softmax_by_hand(x);  // not fusor::log_softmax, which argument lookup would find
  const xt::xarray<double> v = {1.0, 2.0, 3.0};
  auto r = fusor::eval(e, x = v);
  double z = 0;
  for (double t : v) z += std::exp(t - 3.0);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r(i) == doctest::Approx(v(i) - 3.0 - std::log(z)));
}

TEST_CASE("copies of an expression evaluate alike; sub-expressions can be reused") {
  fusor::vector<double> x{"x"};
  auto t = x * 2.0;
  auto e = t + fusor::sin(t);
  auto copy = e;
  const xt::xarray<double> v = {0.5, 1.5};
  CHECK(fusor::eval(e, x = v) == fusor::eval(copy, x = v));
  CHECK(fusor::eval(e, x = v)(1) == doctest::Approx(3.0 + std::sin(3.0)));
}

TEST_CASE("an expression outlives the handle it was built from, and the handle's owner") {
  std::function<xt::xarray<double>()> later;
  {
    auto s = fusor::shared(xt::xarray<double>{7.0}, "s");
    auto e = s + 1.0;
    later = [e] { return fusor::eval(e); };
  }
  CHECK(later() == xt::xarray<double>{8.0});
}
