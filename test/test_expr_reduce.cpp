// Reductions (fused with their producer), transpose, reshape and dot, against
// independent references (plain loops, xtensor).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
xt::xtensor<double, 3> cube() {
  xt::xtensor<double, 3> c(std::array<std::size_t, 3>{3, 4, 5});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 5; ++k) c(i, j, k) = std::sin(1.0 + static_cast<double>(i * 20 + j * 5 + k));
  return c;
}
using fusor_test::contains;
}  // namespace

TEST_CASE("sum/mean/prod/max/min over all axes of a fused expression") {
  fusor::tensor<double, 3> x{"x"};
  const auto c = cube();
  double s = 0, p = 1, mx = -1e300, mn = 1e300;
  for (double v : c) {
    const double y = v * 2.0 + 1.0;
    s += y;
    p *= y;
    mx = std::max(mx, y);
    mn = std::min(mn, y);
  }
  CHECK(fusor::eval(fusor::sum(x * 2.0 + 1.0), x = c) == doctest::Approx(s));
  CHECK(fusor::eval(fusor::mean(x * 2.0 + 1.0), x = c) == doctest::Approx(s / 60.0));
  CHECK(fusor::eval(fusor::prod(x * 2.0 + 1.0), x = c) == doctest::Approx(p));
  CHECK(fusor::eval(fusor::max(x * 2.0 + 1.0), x = c) == mx);
  CHECK(fusor::eval(fusor::min(x * 2.0 + 1.0), x = c) == mn);
}

TEST_CASE("reductions over one axis, several axes, negative axes, keepdims (vs xtensor)") {
  fusor::tensor<double, 3> x{"x"};
  const auto c = cube();
  for (int axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    auto r = fusor::eval(fusor::sum(x, axis), x = c);
    xt::xtensor<double, 2> ref = xt::sum(c, {static_cast<std::size_t>(axis)});
    REQUIRE(r.shape() == ref.shape());
    CHECK(xt::allclose(r, ref));
    auto m = fusor::eval(fusor::max(x, axis), x = c);
    xt::xtensor<double, 2> mref = xt::amax(c, {static_cast<std::size_t>(axis)});
    CHECK(xt::allclose(m, mref));
    auto mn = fusor::eval(fusor::min(x - 1.0, axis), x = c);
    xt::xtensor<double, 2> mnref = xt::amin(c - 1.0, {static_cast<std::size_t>(axis)});
    CHECK(xt::allclose(mn, mnref));
  }
  auto two = fusor::eval(fusor::mean(x, {0, 2}), x = c);
  xt::xtensor<double, 1> two_ref = xt::mean(c, {0, 2});
  CHECK(xt::allclose(two, two_ref));
  auto neg = fusor::eval(fusor::sum(x, -1), x = c);
  xt::xtensor<double, 2> neg_ref = xt::sum(c, {2});
  CHECK(xt::allclose(neg, neg_ref));
  auto kept = fusor::eval(fusor::sum(x, 1, fusor::keepdims), x = c);
  CHECK(kept.shape() == std::array<std::size_t, 3>{3, 1, 5});
  auto all_kept = fusor::eval(fusor::sum(x, fusor::keepdims), x = c);
  CHECK(all_kept.shape() == std::array<std::size_t, 3>{1, 1, 1});
  CHECK(all_kept(0, 0, 0) == doctest::Approx(xt::sum(c)()));
  auto static_axis = fusor::eval(fusor::sum<2>(x), x = c);
  CHECK(xt::allclose(static_axis, neg_ref));
}

TEST_CASE("reductions of a large contiguous float array take the vector path and stay accurate") {
  const std::size_t n = 100003;
  xt::xarray<float> a(std::vector<std::size_t>{n});
  double ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    a(i) = static_cast<float>((i % 7) * 0.5);
    ref += a(i) * 2.0;
  }
  fusor::vector<float> x{"x"};
  CHECK(fusor::eval(fusor::sum(x * 2.f), x = a) == doctest::Approx(ref).epsilon(1e-5));
}

// A reduction that keeps the row and reduces the axis outside it (a bias's
// gradient, sum(X, 0)) accumulates blocks of rows in registers. Rows of every
// length around the vector block (full blocks, single batches, a scalar
// tail), more rows than one block, an outer kept axis, a leaf broadcast along
// the rows, a nan-reduction and max/min/mean: each against plain loops.
template <class T>
void check_reductions_over_rows() {
  fusor::tensor<T, 3> x{"x"};
  fusor::matrix<T> col{"col"};
  for (std::size_t rows : {1, 5, 70, 300})
    for (std::size_t cols : {1, 3, 16, 17, 130, 257, 1030}) {
      // The largest shapes add no branch the others miss (several blocks of
      // rows: 300 x 17, 70 x 257; eight batches and a tail: 5 x 1030) and
      // cost most of a minute under the sanitizers.
      if (rows * cols > 40000) continue;
      CAPTURE(rows);
      CAPTURE(cols);
      const std::size_t outer = 2;
      xt::xtensor<T, 3> a(std::array<std::size_t, 3>{outer, rows, cols});
      xt::xtensor<T, 2> c(std::array<std::size_t, 2>{rows, 1});
      for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t k = 0; k < cols; ++k)
            a(o, r, k) = static_cast<T>(std::sin(0.37 * static_cast<double>(o * 7919 + r * 131 + k)));
      for (std::size_t r = 0; r < rows; ++r) c(r, 0) = static_cast<T>(0.25 * static_cast<double>(r % 5) - 0.5);
      a(0, rows / 2, cols - 1) = std::numeric_limits<T>::quiet_NaN();  // for nansum; the plain sums skip outer 0
      xt::xtensor<double, 2> sum(std::array<std::size_t, 2>{outer, cols}, 0.0), gated = sum, nans = sum;
      xt::xtensor<double, 2> hi(std::array<std::size_t, 2>{outer, cols}, -1e300), lo(std::array<std::size_t, 2>{outer, cols}, 1e300);
      for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t k = 0; k < cols; ++k) {
            const double v = static_cast<double>(a(o, r, k)), cv = static_cast<double>(c(r, 0));
            sum(o, k) += v;
            gated(o, k) += v + cv > 0 ? v : 0.0;
            if (!std::isnan(v)) nans(o, k) += v;
            hi(o, k) = std::max(hi(o, k), v * cv);
            lo(o, k) = std::min(lo(o, k), v * cv);
          }
      const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
      auto close = [&](const auto& got, const xt::xtensor<double, 2>& want, std::size_t from) {
        bool ok = true;
        for (std::size_t o = from; o < outer; ++o)
          for (std::size_t k = 0; k < cols; ++k)
            ok = ok && std::abs(static_cast<double>(got(o, k)) - want(o, k)) <= tol * (1.0 + std::abs(want(o, k)) + static_cast<double>(rows));
        return ok;
      };
      const auto s = fusor::eval(fusor::sum(x, 1), x = a);
      CHECK(std::isnan(s(0, cols - 1)));
      CHECK(close(s, sum, 1));
      const auto m = fusor::eval(fusor::mean(x, 1), x = a);
      xt::xtensor<double, 2> mean = sum / static_cast<double>(rows);
      CHECK(close(m, mean, 1));
      CHECK(close(fusor::eval(fusor::sum(fusor::where(x + col > T(0), x, T(0)), 1), x = a, col = c), gated, 1));
      CHECK(close(fusor::eval(fusor::nansum(x, 1), x = a), nans, 0));
      CHECK(close(fusor::eval(fusor::max(x * col, 1), x = a, col = c), hi, 1));
      CHECK(close(fusor::eval(fusor::min(x * col, 1), x = a, col = c), lo, 1));

      // Over the row itself: rows shorter than a batch run along the kept
      // axis instead (the leaves read across rows, lane by lane).
      xt::xtensor<double, 2> row_sum(std::array<std::size_t, 2>{outer, rows}, 0.0), row_gated = row_sum;
      xt::xtensor<double, 2> row_hi(std::array<std::size_t, 2>{outer, rows}, -1e300);
      for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t k = 0; k < cols; ++k) {
            const double v = static_cast<double>(a(o, r, k)), cv = static_cast<double>(c(r, 0));
            row_sum(o, r) += std::exp(v - cv);
            row_gated(o, r) += v * cv > 0 ? v : 0.0;
            row_hi(o, r) = std::max(row_hi(o, r), v + cv);
          }
      auto close_rows = [&](const auto& got, const xt::xtensor<double, 2>& want) {
        bool ok = true;
        for (std::size_t r = 0; r < rows; ++r)
          ok = ok && std::abs(static_cast<double>(got(1, r)) - want(1, r)) <= tol * (1.0 + std::abs(want(1, r)) + static_cast<double>(cols));
        return ok;
      };
      CHECK(close_rows(fusor::eval(fusor::sum(fusor::exp(x - col), 2), x = a, col = c), row_sum));
      const auto row_mean = fusor::eval(fusor::mean(fusor::exp(x - col), 2), x = a, col = c);
      CHECK(close_rows(row_mean * static_cast<T>(cols), row_sum));
      CHECK(close_rows(fusor::eval(fusor::sum(fusor::where(x * col > T(0), x, T(0)), 2), x = a, col = c), row_gated));
      CHECK(close_rows(fusor::eval(fusor::max(x + col, 2), x = a, col = c), row_hi));

      // Kept whole, nothing reduced (a gradient's sum_to onto its own shape).
      const xt::xtensor<T, 3> same = fusor::eval(fusor::detail::sum_to(fusor::exp(x - col), x), x = a, col = c);
      REQUIRE(same.shape() == a.shape());
      bool same_ok = true;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < cols; ++k) {
          const double want = std::exp(static_cast<double>(a(1, r, k)) - static_cast<double>(c(r, 0)));
          same_ok = same_ok && std::abs(static_cast<double>(same(1, r, k)) - want) <= tol * (1.0 + std::abs(want));
        }
      CHECK(same_ok);
    }
}

TEST_CASE("sums over the axis outside the row, in blocks of rows (vs plain loops)") {
  check_reductions_over_rows<float>();
  check_reductions_over_rows<double>();
}

TEST_CASE("result dtypes of reductions follow NumPy") {
  fusor::vector<std::int8_t> i8{"i8"};
  fusor::vector<std::uint16_t> u16{"u16"};
  fusor::vector<bool> b{"b"};
  fusor::vector<float> f{"f"};
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::sum(i8))>, std::int64_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::sum(u16))>, std::uint64_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::sum(b))>, std::int64_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::mean(i8))>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::mean(f))>, float>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::max(i8))>, std::int8_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::argmax(f))>, std::int64_t>);
  CHECK(fusor::eval(fusor::sum(i8), i8 = xt::xarray<std::int8_t>{100, 100, 100}) == 300);
  CHECK(fusor::eval(fusor::sum(b), b = xt::xarray<bool>{true, false, true}) == 2);
  CHECK(fusor::eval(fusor::mean(i8), i8 = xt::xarray<std::int8_t>{1, 2}) == doctest::Approx(1.5));
}

TEST_CASE("argmax / argmin: flat and along an axis, first occurrence (vs xtensor)") {
  fusor::matrix<double> x{"x"};
  xt::xtensor<double, 2> m = {{1, 9, 3, 9}, {7, 2, 7, 0}, {5, 5, 1, 8}};
  CHECK(fusor::eval(fusor::argmax(x), x = m) == 1);
  CHECK(fusor::eval(fusor::argmin(x), x = m) == 7);
  auto a0 = fusor::eval(fusor::argmax(x, 0), x = m);
  auto r0 = xt::argmax(m, 0);
  for (std::size_t j = 0; j < 4; ++j) CHECK(a0(j) == static_cast<std::int64_t>(r0(j)));
  auto a1 = fusor::eval(fusor::argmin(x * -1.0, 1), x = m);
  for (std::size_t i = 0; i < 3; ++i) CHECK(a1(i) == static_cast<std::int64_t>(xt::argmax(xt::view(m, i))()));
}

TEST_CASE("empty and one-element reductions") {
  fusor::vector<double> x{"x"};
  const xt::xarray<double> empty(std::vector<std::size_t>{0});
  CHECK(fusor::eval(fusor::sum(x), x = empty) == 0.0);
  CHECK(fusor::eval(fusor::prod(x), x = empty) == 1.0);
  CHECK(std::isnan(fusor::eval(fusor::mean(x), x = empty)));
  CHECK_THROWS_AS((void)fusor::eval(fusor::max(x), x = empty), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::argmin(x), x = empty), fusor::value_error);
  CHECK(fusor::eval(fusor::max(x), x = xt::xarray<double>{4.0}) == 4.0);
  CHECK(fusor::eval(fusor::argmax(x), x = xt::xarray<double>{4.0}) == 0);
}

TEST_CASE("reductions over a non-empty axis of an empty array give an empty result, as NumPy's") {
  // Found by the differential tests: argmax over axis 0 of a (17, 0) array
  // was refused as "an empty sequence"; NumPy returns shape (0,).
  fusor::matrix<double> m{"m"};
  const xt::xarray<double> none = xt::xarray<double>::from_shape({17, 0});
  const xt::xtensor<std::int64_t, 1> a = fusor::eval(fusor::argmax(m, 0), m = none);
  CHECK(a.shape()[0] == 0);
  const xt::xtensor<std::int64_t, 1> b = fusor::eval(fusor::argmin(m, -2), m = none);
  CHECK(b.shape()[0] == 0);
  const xt::xtensor<double, 1> c = fusor::eval(fusor::max(m, 0), m = none);
  CHECK(c.shape()[0] == 0);
  // Over the empty axis itself: NumPy's errors.
  CHECK_THROWS_AS((void)fusor::eval(fusor::argmax(m, 1), m = none), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::max(m, 1), m = none), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::argmax(m), m = none), fusor::value_error);
  // ...even when the result is empty too: NumPy refuses min over axis 1 of a
  // (0, 0) array (its outputs would each reduce nothing), and not over axis 1
  // of a (0, 3) one. Found by the differential tests (fusor returned (0, 1)).
  const xt::xarray<double> both = xt::xarray<double>::from_shape({0, 0});
  CHECK_THROWS_AS((void)fusor::eval(fusor::min(m, 1, fusor::keepdims), m = both), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::argmin(m, 1), m = both), fusor::value_error);
  const xt::xarray<double> no_rows = xt::xarray<double>::from_shape({0, 3});
  const xt::xtensor<double, 1> d = fusor::eval(fusor::min(m, 1), m = no_rows);
  CHECK(d.shape()[0] == 0);
  const xt::xtensor<std::int64_t, 1> e = fusor::eval(fusor::argmin(m, 1), m = no_rows);
  CHECK(e.shape()[0] == 0);
  CHECK(fusor::eval(fusor::sum(m, 1), m = both).size() == 0);  // sums have an identity: never refused
}

TEST_CASE("a reduction axis out of range at run time is a shape_error") {
  fusor::matrix<double> x{"x"};
  try {
    (void)fusor::eval(fusor::sum(x, 2), x = xt::xtensor<double, 2>{{1.0}});
    FAIL("expected shape_error");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "axis 2 is out of bounds"));
    CHECK(contains(e.what(), "sum(x, axis=2)"));
  }
}

TEST_CASE("softmax-like chains: x - max(x) broadcast back, then normalised") {
  fusor::matrix<double> x{"x"};
  xt::xtensor<double, 2> v = {{1, 2, 3}, {-1, 0, 5}};
  auto e = fusor::exp(x - fusor::max(x, 1, fusor::keepdims));
  auto r = fusor::eval(e / fusor::sum(e, 1, fusor::keepdims), x = v);
  for (std::size_t i = 0; i < 2; ++i) {
    double mx = std::max({v(i, 0), v(i, 1), v(i, 2)}), z = 0;
    for (std::size_t j = 0; j < 3; ++j) z += std::exp(v(i, j) - mx);
    for (std::size_t j = 0; j < 3; ++j) CHECK(r(i, j) == doctest::Approx(std::exp(v(i, j) - mx) / z));
  }
}

TEST_CASE("transpose and axis permutation (views of leaves, materialised for compounds)") {
  fusor::matrix<double> x{"x"};
  xt::xtensor<double, 2> m = {{1, 2, 3}, {4, 5, 6}};
  auto t = fusor::eval(fusor::transpose(x), x = m);
  CHECK(t == xt::xtensor<double, 2>(xt::transpose(m)));
  auto tc = fusor::eval(fusor::transpose(x * 2.0) + 1.0, x = m);
  CHECK(tc == xt::xtensor<double, 2>(xt::transpose(m) * 2.0 + 1.0));
  fusor::tensor<double, 3> c{"c"};
  const auto cv = cube();
  auto p = fusor::eval(fusor::transpose(c, {2, 0, 1}), c = cv);
  xt::xtensor<double, 3> pref = xt::transpose(cv, {2, 0, 1});
  CHECK(p == pref);
  CHECK_THROWS_AS((void)fusor::eval(fusor::transpose(c, {0, 0, 1}), c = cv), fusor::shape_error);
}

TEST_CASE("reshape, with one inferred extent; a wrong element count is refused") {
  fusor::matrix<double> x{"x"};
  xt::xtensor<double, 2> m = {{1, 2, 3}, {4, 5, 6}};
  auto r = fusor::eval(fusor::reshape(x, {3, 2}), x = m);
  CHECK(r == xt::xtensor<double, 2>{{1, 2}, {3, 4}, {5, 6}});
  auto flat = fusor::eval(fusor::reshape(x + 1.0, {-1}), x = m);
  CHECK(flat == xt::xtensor<double, 1>{2, 3, 4, 5, 6, 7});
  auto of_transpose = fusor::eval(fusor::reshape(fusor::transpose(x), {6}), x = m);
  CHECK(of_transpose == xt::xtensor<double, 1>{1, 4, 2, 5, 3, 6});
  CHECK_THROWS_AS((void)fusor::eval(fusor::reshape(x, {4, 2}), x = m), fusor::shape_error);
}

TEST_CASE("dot: vector.vector, matrix.vector, vector.matrix, matrix.matrix (vs loops)") {
  fusor::matrix<double> A{"A"};
  fusor::matrix<double> B{"B"};
  fusor::vector<double> v{"v"};
  fusor::vector<double> w{"w"};
  xt::xtensor<double, 2> a = {{1, 2, 3}, {4, 5, 6}};
  xt::xtensor<double, 2> b = {{1, 0}, {2, 1}, {0, 3}};
  xt::xtensor<double, 1> vv = {1, -1, 2};
  xt::xtensor<double, 1> wv = {3, 4};
  CHECK(fusor::eval(fusor::dot(v, v), v = vv) == 6.0);
  auto mv = fusor::eval(fusor::dot(A, v), A = a, v = vv);
  CHECK(mv == xt::xtensor<double, 1>{5, 11});
  auto vm = fusor::eval(fusor::dot(w, A), w = wv, A = a);
  CHECK(vm == xt::xtensor<double, 1>{19, 26, 33});
  auto mm = fusor::eval(fusor::dot(A, B) * 2.0, A = a, B = b);
  xt::xtensor<double, 2> ref(std::array<std::size_t, 2>{2, 2});
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < 3; ++k) s += a(i, k) * b(k, j);
      ref(i, j) = 2.0 * s;
    }
  CHECK(mm == ref);
  // Mixed dtypes promote; integers use the loop.
  fusor::matrix<std::int32_t> I{"I"};
  auto im = fusor::eval(fusor::dot(I, I), I = xt::xtensor<std::int32_t, 2>{{1, 2}, {3, 4}});
  CHECK(im == xt::xtensor<std::int32_t, 2>{{7, 10}, {15, 22}});
  fusor::matrix<float> F{"F"};
  auto mixed = fusor::eval(fusor::dot(F, A), F = xt::xtensor<float, 2>{{1.f, 1.f}}, A = a);
  static_assert(std::is_same_v<decltype(mixed)::value_type, double>);
  CHECK(mixed == xt::xtensor<double, 2>{{5, 7, 9}});
  try {
    (void)fusor::eval(fusor::dot(A, A), A = a);
    FAIL("misaligned dot");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "dot(A, A)"));
    CHECK(contains(e.what(), "not aligned"));
  }
}

TEST_CASE("dot with transposed operands goes to BLAS without a copy and is right") {
  fusor::matrix<double> A{"A"};
  fusor::matrix<double> B{"B"};
  fusor::vector<double> v{"v"};
  xt::xtensor<double, 2> a = {{1, 2, 3}, {4, 5, 6}};
  xt::xtensor<double, 2> b = {{1, 0, 2}, {0, 1, 1}};
  const xt::xtensor<double, 1> vv = {1, -1};
  CHECK(fusor::eval(fusor::dot(fusor::transpose(A), v), A = a, v = vv) == xt::xtensor<double, 1>{-3, -3, -3});
  auto abt = fusor::eval(fusor::dot(A, fusor::transpose(B)), A = a, B = b);
  CHECK(abt == xt::xtensor<double, 2>{{7, 5}, {16, 11}});
  auto atb = fusor::eval(fusor::dot(fusor::transpose(A), B), A = a, B = b);
  CHECK(atb == xt::xtensor<double, 2>{{1, 4, 6}, {2, 5, 9}, {3, 6, 12}});
  fusor::matrix<std::int32_t> I{"I"};
  auto it = fusor::eval(fusor::dot(fusor::transpose(I), I), I = xt::xtensor<std::int32_t, 2>{{1, 2}, {3, 4}});
  CHECK(it == xt::xtensor<std::int32_t, 2>{{10, 14}, {14, 20}});
}

TEST_CASE("a dot or reduction used several times in one evaluation is computed once, correctly") {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> w{"w"};
  const xt::xtensor<double, 2> xv = {{1, 2}, {3, 4}, {5, 6}};
  const xt::xtensor<double, 1> wv = {1, -1};
  auto z = fusor::dot(x, w);  // [-1, -1, -1]
  auto e = z * fusor::sum(z) + fusor::dot(x, w) - fusor::sum(z * 1.0);
  auto r = fusor::eval(e, x = xv, w = wv);
  CHECK(r == xt::xtensor<double, 1>{5, 5, 5});
  // Same structure, different inputs: not confused.
  fusor::vector<double> u{"u"};
  auto two = fusor::eval(fusor::dot(x, w) + fusor::dot(x, u), x = xv, w = wv, u = xt::xtensor<double, 1>{1, 1});
  CHECK(two == xt::xtensor<double, 1>{2, 6, 10});
}

TEST_CASE("an element has one value wherever a loop computes it: as a batch, in a row's tail, or in a scalar kernel") {
  // A math function's element 0 of a 17-element array is computed in the
  // vector body (17 exceeds every vector width); alone, as a one-element
  // array, in the scalar tail. They must agree to the bit: comparisons and
  // the gradient of max rely on it.
  // Each expression is compiled twice, once per shape, so that the 200
  // arguments run through prepared plans (a plan per call would cost this
  // test most of a minute under the sanitizers).
  auto check = [](const char* name, const auto& e, const auto& sym, auto all) {
    using T = typename decltype(all)::value_type;
    auto first = decltype(all)(xt::view(all, xt::range(0, 1)));
    auto body = fusor::function(fusor::inputs(sym), fusor::outputs(e));
    auto tail = fusor::function(fusor::inputs(sym), fusor::outputs(e));
    for (int k = 0; k < 200; ++k) {
      const double x = -2.5 + 0.0251 * k;  // negative ones too: log's NaN must be NaN on both paths
      all(0) = first(0) = static_cast<T>(x);
      INFO(std::string(name) << " at " << x);
      const double b = static_cast<double>(body(all)(0)), t = static_cast<double>(tail(first)(0));
      CHECK((b == t || (std::isnan(b) && std::isnan(t))));
    }
  };
  fusor::vector<double> v{"v"};
  fusor::vector<float> f{"f"};
  const xt::xtensor<double, 1> dv = xt::linspace<double>(-3.0, 3.0, 17);
  const xt::xtensor<float, 1> fv = xt::linspace<float>(-3.0f, 3.0f, 17);
  check("sin", fusor::sin(v), v, dv);
  check("cos", fusor::cos(v), v, dv);
  check("tan", fusor::tan(v), v, dv);
  check("exp", fusor::exp(v), v, dv);
  check("expm1", fusor::expm1(v), v, dv);
  check("log", fusor::log(v), v, dv);
  check("log1p", fusor::log1p(v), v, dv);
  check("tanh", fusor::tanh(v), v, dv);
  check("sigmoid", fusor::sigmoid(v), v, dv);
  check("softplus", fusor::softplus(v), v, dv);
  check("float sin", fusor::sin(f), f, fv);
  check("float exp", fusor::exp(f), f, fv);
}

template <class T>
void check_exp_near_overflow(T from, T to) {
  fusor::vector<T> v{"v"};
  auto exp_f = fusor::function(fusor::inputs(v), fusor::outputs(fusor::exp(v), fusor::expm1(v)));
  // 17 elements: every one but the last in the vector body; the last alone in the tail.
  xt::xtensor<T, 1> x = xt::linspace<T>(from, to, 17);
  for (int k = 0; k < 40; ++k) {
    x += (to - from) / T(17 * 40);
    const auto [e, m] = exp_f(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("x = " << x(i));
      const T want = std::exp(x(i)), want_m1 = std::expm1(x(i));
      if (std::isinf(want)) {
        CHECK(std::isinf(e(i)));
      } else {
        CHECK(std::isfinite(e(i)));
        CHECK(std::abs(e(i) - want) <= 8 * std::numeric_limits<T>::epsilon() * want);
      }
      if (std::isinf(want_m1)) CHECK(std::isinf(m(i)));
      else CHECK(std::abs(m(i) - want_m1) <= 8 * std::numeric_limits<T>::epsilon() * want_m1);
    }
  }
}

TEST_CASE("exp and expm1 are finite up to the largest number's log (found by the differential tests)") {
  // xsimd's exp scaled by a power of two that overflows from 127.5 log 2
  // (float) and 1023.5 log 2 (double): exp(88.46f) was inf, where it is 2.62e38.
  check_exp_near_overflow<float>(88.0f, 88.9f);
  check_exp_near_overflow<double>(709.0, 710.0);
}

TEST_CASE("x == max(x) finds the maximum of a computed x, and the gradient of max is one-hot (found by the differential tests)") {
  // The reduction computes sin(w * w) in batches; the comparison, whose bool
  // result does not vectorise, computed it with the C library's sin: a last-
  // bit difference left no element equal to the maximum, and the gradient of
  // max (where(x == max(x), 1 / count, 0)) divided by a count of zero.
  auto w = fusor::shared(xt::xtensor<double, 1>(xt::zeros<double>({19})), "w");
  auto x = fusor::sin(w * w);
  auto g = fusor::grad(fusor::max(x), w);
  for (int k = 0; k < 100; ++k) {
    xt::xtensor<double, 1> wv = xt::zeros<double>({19});
    for (std::size_t i = 0; i < 19; ++i) wv(i) = 0.5 * std::sin(0.7 * static_cast<double>(k * 19 + i) + 0.3);
    wv(5) = 1.0 + 0.001 * k;  // the maximum of sin(w * w), in the vector body on every instruction set
    w.set_value(wv);
    INFO("k = " << k);
    CHECK(fusor::eval(fusor::sum(fusor::cast<std::int64_t>(x == fusor::max(x)))) == 1);
    const xt::xtensor<double, 1> gv = fusor::eval(g);
    xt::xtensor<double, 1> expected = xt::zeros<double>({19});
    expected(5) = std::cos(wv(5) * wv(5)) * 2 * wv(5);
    CHECK(xt::allclose(gv, expected, 1e-12, 1e-14));
  }
}
