// NaN semantics, NumPy's: max / min / maximum / minimum / clip propagate NaN
// whatever the operand order and the instruction set; fmax / fmin / nanmax /
// nanmin / nansum / nanmean ignore it. This file is built twice, with the
// machine's widest vectors and with the baseline instruction set (SSE2 on
// x86-64), and both must agree with NumPy. Sizes cover the vectorised body
// (several batches, four accumulators) and the scalar tail.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include <fusor/fusor.hpp>

namespace {
const double NaN = std::numeric_limits<double>::quiet_NaN();
const double Inf = std::numeric_limits<double>::infinity();

/// [1, 2, ..., n] with NaN at position `at` (none when at >= n).
template <class T>
xt::xtensor<T, 1> ramp(std::size_t n, std::size_t at) {
  xt::xtensor<T, 1> v = xt::xtensor<T, 1>::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) v(i) = static_cast<T>(i + 1);
  if (at < n) v(at) = std::numeric_limits<T>::quiet_NaN();
  return v;
}
}  // namespace

TEST_CASE_TEMPLATE("max and min propagate NaN wherever it is", T, float, double) {
  fusor::vector<T> x{"x"};
  for (std::size_t n : {1u, 2u, 3u, 7u, 16u, 33u, 64u, 100u, 257u}) {
    for (std::size_t at = 0; at < n; at += (n > 20 ? 7 : 1)) {
      const auto v = ramp<T>(n, at);
      CAPTURE(n);
      CAPTURE(at);
      CHECK(std::isnan(fusor::eval(fusor::max(x), x = v)));
      CHECK(std::isnan(fusor::eval(fusor::min(x), x = v)));
    }
    const auto clean = ramp<T>(n, n);
    CHECK(fusor::eval(fusor::max(x), x = clean) == static_cast<T>(n));
    CHECK(fusor::eval(fusor::min(x), x = clean) == T(1));
  }
  CHECK(std::isnan(fusor::eval(fusor::max(x), x = xt::xtensor<T, 1>{T(NaN), T(1)})));      // -Inf before
  CHECK(std::isnan(fusor::eval(fusor::min(x), x = xt::xtensor<T, 1>{T(NaN), T(1), T(2)})));  // 2 before
  const xt::xtensor<T, 1> all_nan = xt::xtensor<T, 1>::from_shape({40});
  xt::xtensor<T, 1> a = all_nan;
  a.fill(T(NaN));
  CHECK(std::isnan(fusor::eval(fusor::max(x), x = a)));  // -Inf before, on every build
  CHECK(std::isnan(fusor::eval(fusor::min(x), x = a)));
}

TEST_CASE("max along an axis propagates NaN per slice") {
  fusor::matrix<double> m{"m"};
  const xt::xtensor<double, 2> v = {{1, NaN, 3}, {4, 5, 6}, {NaN, NaN, NaN}};
  const xt::xtensor<double, 1> rows = fusor::eval(fusor::max(m, 1), m = v);
  CHECK(std::isnan(rows(0)));
  CHECK(rows(1) == 6.0);
  CHECK(std::isnan(rows(2)));
  const xt::xtensor<double, 1> cols = fusor::eval(fusor::min(m, 0), m = v);
  CHECK(std::isnan(cols(0)));
  CHECK(std::isnan(cols(1)));
  CHECK(std::isnan(cols(2)));
}

TEST_CASE("maximum, minimum and clip propagate NaN from either side") {
  fusor::vector<double> x{"x"};
  const xt::xtensor<double, 1> v = {NaN, 1, -1, NaN, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, NaN, 17};
  for (const auto& r : {xt::xtensor<double, 1>(fusor::eval(fusor::maximum(x, 0.0), x = v)),
                        xt::xtensor<double, 1>(fusor::eval(fusor::maximum(0.0, x), x = v)),
                        xt::xtensor<double, 1>(fusor::eval(fusor::minimum(x, 0.0), x = v)),
                        xt::xtensor<double, 1>(fusor::eval(fusor::minimum(0.0, x), x = v)),
                        xt::xtensor<double, 1>(fusor::eval(fusor::clip(x, 0.0, 10.0), x = v))}) {
    for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::isnan(r(i)) == std::isnan(v(i)));
  }
  const xt::xtensor<double, 1> m0 = fusor::eval(fusor::maximum(0.0, x), x = v);
  CHECK(m0(1) == 1.0);
  CHECK(m0(2) == 0.0);
  // A NaN bound makes the result NaN too (np.clip(1, NaN, 2) is NaN).
  fusor::scalar<double> lo{"lo"};
  const xt::xtensor<double, 1> c = fusor::eval(fusor::clip(x, lo, 10.0), x = v, lo = NaN);
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::isnan(c(i)));
  // And a NaN from both sides stays NaN.
  const xt::xtensor<double, 1> both = fusor::eval(fusor::maximum(x, x), x = v);
  CHECK(std::isnan(both(0)));
  CHECK(both(1) == 1.0);
}

TEST_CASE("maximum with a NaN gives the same result in a vectorised function and in eval") {
  fusor::vector<float> x{"x"};
  auto w = fusor::shared(xt::xtensor<float, 1>::from_shape({70}), "w");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::maximum(w, x), fusor::maximum(x, w)));
  xt::xtensor<float, 1> xv = xt::xtensor<float, 1>::from_shape({70});
  xv.fill(1.0f);
  xv(3) = std::numeric_limits<float>::quiet_NaN();
  w.set_value(ramp<float>(70, 40));
  auto [a, b] = f(xv);
  for (std::size_t i = 0; i < 70; ++i) {
    CAPTURE(i);
    CHECK(std::isnan(a(i)) == (i == 3 || i == 40));
    CHECK(std::isnan(b(i)) == (i == 3 || i == 40));
  }
}

TEST_CASE_TEMPLATE("fmax, fmin ignore NaN unless both are NaN", T, float, double) {
  fusor::vector<T> x{"x"}, y{"y"};
  const xt::xtensor<T, 1> xv = {T(NaN), T(1), T(NaN), T(4), T(-Inf), T(2), T(3), T(4), T(5), T(6), T(7), T(8), T(9),
                                T(10), T(11), T(12), T(13), T(NaN)};
  const xt::xtensor<T, 1> yv = {T(2), T(NaN), T(NaN), T(3), T(0), T(3), T(2), T(5), T(4), T(7), T(6), T(9), T(8),
                                T(11), T(10), T(13), T(12), T(1)};
  const xt::xtensor<T, 1> mx = fusor::eval(fusor::fmax(x, y), x = xv, y = yv);
  const xt::xtensor<T, 1> mn = fusor::eval(fusor::fmin(x, y), x = xv, y = yv);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(xv(i)) && std::isnan(yv(i))) {
      CHECK(std::isnan(mx(i)));
      CHECK(std::isnan(mn(i)));
    } else {
      CHECK(mx(i) == (std::isnan(xv(i)) ? yv(i) : std::isnan(yv(i)) ? xv(i) : std::max(xv(i), yv(i))));
      CHECK(mn(i) == (std::isnan(xv(i)) ? yv(i) : std::isnan(yv(i)) ? xv(i) : std::min(xv(i), yv(i))));
    }
  }
}

TEST_CASE_TEMPLATE("nanmax, nanmin, nansum, nanmean ignore NaN", T, float, double) {
  fusor::vector<T> x{"x"};
  for (std::size_t n : {1u, 5u, 16u, 33u, 100u}) {
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      CAPTURE(n);
      CAPTURE(at);
      const auto v = ramp<T>(n, at);
      double s = 0, count = 0;
      T mx = -std::numeric_limits<T>::infinity(), mn = std::numeric_limits<T>::infinity();
      for (std::size_t i = 0; i < n; ++i)
        if (i != at) {
          s += static_cast<double>(v(i));
          ++count;
          mx = std::max(mx, v(i));
          mn = std::min(mn, v(i));
        }
      if (n == 1) {
        CHECK(std::isnan(fusor::eval(fusor::nanmax(x), x = v)));  // all-NaN slice: NaN
        CHECK(std::isnan(fusor::eval(fusor::nanmin(x), x = v)));
        CHECK(fusor::eval(fusor::nansum(x), x = v) == T(0));
        CHECK(std::isnan(fusor::eval(fusor::nanmean(x), x = v)));
      } else {
        CHECK(fusor::eval(fusor::nanmax(x), x = v) == mx);
        CHECK(fusor::eval(fusor::nanmin(x), x = v) == mn);
        CHECK(fusor::eval(fusor::nansum(x), x = v) == doctest::Approx(s));
        CHECK(fusor::eval(fusor::nanmean(x), x = v) == doctest::Approx(s / count));
      }
    }
  }
  static_assert(std::is_same_v<decltype(fusor::eval(fusor::nanmean(x), x = ramp<T>(1, 1))), T>);
}

TEST_CASE("NaN-ignoring reductions along axes, with keepdims") {
  fusor::matrix<double> m{"m"};
  const xt::xtensor<double, 2> v = {{1, NaN, 3}, {NaN, NaN, NaN}, {4, 5, 6}};
  const xt::xtensor<double, 1> mx = fusor::eval(fusor::nanmax(m, 1), m = v);
  CHECK(mx(0) == 3.0);
  CHECK(std::isnan(mx(1)));
  CHECK(mx(2) == 6.0);
  const xt::xtensor<double, 2> mean = fusor::eval(fusor::nanmean(m, 1, fusor::keepdims), m = v);
  CHECK(mean.shape()[1] == 1u);
  CHECK(mean(0, 0) == 2.0);
  CHECK(std::isnan(mean(1, 0)));
  CHECK(mean(2, 0) == 5.0);
  const xt::xtensor<double, 1> cols = fusor::eval(fusor::nansum(m, 0), m = v);
  CHECK(cols(0) == 5.0);
  CHECK(cols(1) == 5.0);
  CHECK(cols(2) == 9.0);
  const xt::xtensor<double, 1> cmin = fusor::eval(fusor::nanmin(m, 0), m = v);
  CHECK(cmin(0) == 1.0);
  CHECK(cmin(1) == 5.0);
  CHECK(cmin(2) == 3.0);
  // Expressions print under their NumPy names.
  CHECK(fusor::nanmean(m, 1).str() == "nanmean(m, axis=1)");
  // Zero-size: nanmax has no identity, nansum is 0, nanmean is NaN.
  const xt::xtensor<double, 2> empty = xt::xtensor<double, 2>::from_shape({0, 3});
  CHECK_THROWS_AS((void)fusor::eval(fusor::nanmax(m), m = empty), fusor::value_error);
  CHECK(fusor::eval(fusor::nansum(m), m = empty) == 0.0);
  CHECK(std::isnan(fusor::eval(fusor::nanmean(m), m = empty)));
}

TEST_CASE("NaN-ignoring forms on integers are the plain forms") {
  fusor::vector<std::int32_t> x{"x"};
  const xt::xtensor<std::int32_t, 1> v = {3, -1, 7};
  CHECK(fusor::eval(fusor::nanmax(x), x = v) == 7);
  CHECK(fusor::eval(fusor::nanmin(x), x = v) == -1);
  CHECK(fusor::eval(fusor::nansum(x), x = v) == std::int64_t{9});
  CHECK(fusor::eval(fusor::nanmean(x), x = v) == 3.0);
  const xt::xtensor<std::int32_t, 1> f = fusor::eval(fusor::fmax(x, 0), x = v);
  CHECK(f == xt::xtensor<std::int32_t, 1>{3, 0, 7});
}

TEST_CASE("argmax and argmin report the first NaN, as NumPy") {
  fusor::vector<double> x{"x"};
  CHECK(fusor::eval(fusor::argmax(x), x = xt::xtensor<double, 1>{1, NaN, 3, NaN}) == 1);
  CHECK(fusor::eval(fusor::argmin(x), x = xt::xtensor<double, 1>{1, 3, NaN}) == 2);
}

TEST_CASE_TEMPLATE("exp, expm1, tanh, sigmoid and softplus of infinities and NaN, in the vector loop", T, float, double) {
  // xsimd's double exp converts an integer with a C++ cast that is undefined
  // for ±inf and NaN on SSE2 and AVX2 (the sanitizer build stops on it);
  // fusor clamps the argument where the function has saturated. Values are
  // C's (NumPy's): exp(-inf) 0, tanh(inf) 1, sigmoid(-inf) 0, ...
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T special[] = {-inf, inf, nan, T(-800), T(800), T(0), T(-40), T(40)};
  xt::xtensor<T, 1> v = xt::xtensor<T, 1>::from_shape({64});
  for (std::size_t i = 0; i < v.size(); ++i) v(i) = special[i / 8];  // each case fills a batch
  fusor::vector<T> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::exp(x), fusor::expm1(x), fusor::tanh(x),
                                                            fusor::sigmoid(x), fusor::softplus(x)));
  auto [e, em1, th, sg, sp] = f(v);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const T a = v(i);
    CAPTURE(a);
    auto same = [](T got, T want) { return std::isnan(want) ? std::isnan(got) : got == doctest::Approx(want).epsilon(1e-6) || got == want; };
    CHECK(same(e(i), std::exp(a)));
    CHECK(same(em1(i), std::expm1(a)));
    CHECK(same(th(i), std::tanh(a)));
    CHECK(same(sg(i), std::isnan(a) ? a : T(1) / (T(1) + std::exp(-a))));
    CHECK(same(sp(i), std::isnan(a) ? a : (a > 0 ? a : T(0)) + std::log1p(std::exp(-std::abs(a)))));
  }
}

TEST_CASE("this build's instruction set (the suite runs these tests on two)") {
  const std::string arch = xsimd::default_arch::name();
  MESSAGE("xsimd instruction set: " << arch);
#if defined(FUSOR_TEST_BASELINE_ISA) && defined(__x86_64__)
  CHECK(arch == "sse2");  // the baseline build really is the baseline
#elif defined(__AVX__)
  CHECK(arch != "sse2");  // -march=native on an AVX machine: wider vectors than the baseline's
#else
  CHECK(xsimd::batch<double>::size >= 1);  // another architecture: only that xsimd vectorises at all
#endif
}
