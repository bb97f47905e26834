// Elementwise expressions: values against plain loops, NumPy result dtypes,
// broadcasting, integer and bool dtypes, empty and one-element arrays,
// printing, and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::contains;

xt::xarray<double> ramp(std::size_t n, double start = 0.5, double step = 0.25) {
  xt::xarray<double> a(std::vector<std::size_t>{n});
  for (std::size_t i = 0; i < n; ++i) a(i) = start + step * static_cast<double>(i);
  return a;
}
}  // namespace

TEST_CASE("arithmetic over inputs, shared variables and constants matches a plain loop") {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(8), std::size_t(17),
                        std::size_t(1000)}) {
    CAPTURE(n);
    fusor::vector<double> x{"x"};
    auto a = fusor::shared(ramp(n, 1.0), "a");
    const xt::xarray<double> xv = ramp(n, -2.0, 0.5);
    auto r = fusor::eval(2.0 * x + a * a - x / a, x = xv);
    // `a` holds an xt::xarray (rank known at run time), so the result is one too.
    static_assert(std::is_same_v<decltype(r), xt::xarray<double>>);
    REQUIRE(r.size() == n);
    const auto av = a.get_value();
    for (std::size_t i = 0; i < n; ++i) CHECK(r(i) == doctest::Approx(2.0 * xv(i) + av(i) * av(i) - xv(i) / av(i)));
  }
}

TEST_CASE("unary math functions match std:: (float and double)") {
  const std::size_t n = 37;  // not a multiple of any batch size: exercises the tail
  xt::xarray<double> xd = ramp(n, 0.05, 0.11);
  xt::xarray<float> xf = xt::cast<float>(xd);
  fusor::vector<double> x{"x"};
  fusor::vector<float> y{"y"};
  auto check_d = [&](auto expr, auto ref) {
    auto r = fusor::eval(expr, x = xd);
    for (std::size_t i = 0; i < n; ++i) CHECK(r(i) == doctest::Approx(ref(xd(i))).epsilon(1e-12));
  };
  auto check_f = [&](auto expr, auto ref) {
    auto r = fusor::eval(expr, y = xf);
    static_assert(std::is_same_v<typename decltype(r)::value_type, float>);
    for (std::size_t i = 0; i < n; ++i) CHECK(r(i) == doctest::Approx(ref(xf(i))).epsilon(1e-5));
  };
  check_d(fusor::exp(x), [](double v) { return std::exp(v); });
  check_d(fusor::expm1(x), [](double v) { return std::expm1(v); });
  check_d(fusor::log(x), [](double v) { return std::log(v); });
  check_d(fusor::log1p(x), [](double v) { return std::log1p(v); });
  check_d(fusor::sqrt(x), [](double v) { return std::sqrt(v); });
  check_d(fusor::sin(x), [](double v) { return std::sin(v); });
  check_d(fusor::cos(x), [](double v) { return std::cos(v); });
  check_d(fusor::tan(x), [](double v) { return std::tan(v); });
  check_d(fusor::tanh(x - 2.0), [](double v) { return std::tanh(v - 2.0); });
  check_d(fusor::abs(x - 2.0), [](double v) { return std::fabs(v - 2.0); });
  check_d(fusor::sigmoid(x - 2.0), [](double v) { return 1.0 / (1.0 + std::exp(-(v - 2.0))); });
  check_d(fusor::softplus(x * 40.0 - 60.0), [](double v) { return std::log1p(std::exp(v * 40.0 - 60.0)); });
  check_d(-x, [](double v) { return -v; });
  check_d(fusor::pow(x, 1.5), [](double v) { return std::pow(v, 1.5); });
  check_d(fusor::maximum(x, 2.0), [](double v) { return std::max(v, 2.0); });
  check_d(fusor::minimum(x, 2.0), [](double v) { return std::min(v, 2.0); });
  check_d(fusor::clip(x, 1.0, 3.0), [](double v) { return std::clamp(v, 1.0, 3.0); });
  check_d(fusor::where(x > 2.0, x, -x), [](double v) { return v > 2.0 ? v : -v; });
  check_f(fusor::exp(y), [](float v) { return std::exp(v); });
  check_f(fusor::log1p(y), [](float v) { return std::log1p(v); });
  check_f(fusor::tanh(y), [](float v) { return std::tanh(v); });
  check_f(fusor::sigmoid(y), [](float v) { return 1.f / (1.f + std::exp(-v)); });
  check_f(y * 0.5 + 1, [](float v) { return v * 0.5f + 1.f; });
}

TEST_CASE("softplus stays finite for large arguments") {
  fusor::vector<double> x{"x"};
  auto r = fusor::eval(fusor::softplus(x), x = xt::xarray<double>{-1000.0, 0.0, 1000.0});
  CHECK(r(0) == doctest::Approx(0.0));
  CHECK(r(1) == doctest::Approx(std::log(2.0)));
  CHECK(r(2) == doctest::Approx(1000.0));
}

TEST_CASE("result dtypes follow NumPy (weak C++ constants, NEP 50)") {
  fusor::vector<float> f{"f"};
  fusor::vector<double> d{"d"};
  fusor::vector<std::int32_t> i{"i"};
  fusor::vector<std::int8_t> i8{"i8"};
  fusor::vector<std::uint8_t> u8{"u8"};
  fusor::vector<bool> b{"b"};
  static_assert(std::is_same_v<fusor::value_type_t<decltype(2 * f)>, float>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(0.5 * f)>, float>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(f + d)>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(f + i)>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(i * 2)>, std::int32_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(i * 0.5)>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(i8 + u8)>, std::int16_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(i / i)>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(i8 / i8)>, float>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(f < d)>, bool>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(b + b)>, bool>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::exp(i))>, double>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::cast<std::int16_t>(f))>, std::int16_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::where(b, i, f))>, double>);
  CHECK(fusor::dtype_of<fusor::value_type_t<decltype(i8 + u8)>> == fusor::promote(fusor::dtype::int8, fusor::dtype::uint8));
}

TEST_CASE("integer arithmetic, floor modulo, true division, comparisons and logic") {
  fusor::vector<std::int32_t> a{"a"};
  fusor::vector<std::int32_t> b{"b"};
  const xt::xarray<std::int32_t> av = {7, -7, 7, -7, 0, 5};
  const xt::xarray<std::int32_t> bv = {2, 2, -2, -2, 3, 0};
  auto mod = fusor::eval(a % b, a = av, b = bv);
  const std::int32_t expected_mod[] = {1, 1, -1, -1, 0, 0};  // Python's %, and x % 0 == 0
  for (std::size_t k = 0; k < 6; ++k) CHECK(mod(k) == expected_mod[k]);
  auto div = fusor::eval(a / b, a = av, b = bv);
  CHECK(div(0) == doctest::Approx(3.5));
  CHECK(div(1) == doctest::Approx(-3.5));
  CHECK(std::isinf(div(5)));
  auto sum = fusor::eval(a + b * 3 - 1, a = av, b = bv);
  for (std::size_t k = 0; k < 6; ++k) CHECK(sum(k) == av(k) + bv(k) * 3 - 1);
  auto lt = fusor::eval(a < b, a = av, b = bv);
  static_assert(std::is_same_v<decltype(lt)::value_type, bool>);
  for (std::size_t k = 0; k < 6; ++k) CHECK(lt(k) == (av(k) < bv(k)));
  auto logic = fusor::eval(((a > 0) && !(b < 0)) || (a == b), a = av, b = bv);
  for (std::size_t k = 0; k < 6; ++k) CHECK(logic(k) == (((av(k) > 0) && !(bv(k) < 0)) || (av(k) == bv(k))));
  auto ne = fusor::eval(fusor::logical_or(a != 7, fusor::logical_not(b == 2)), a = av, b = bv);
  for (std::size_t k = 0; k < 6; ++k) CHECK(ne(k) == ((av(k) != 7) || !(bv(k) == 2)));
  auto ab = fusor::eval(fusor::abs(a), a = av);
  for (std::size_t k = 0; k < 6; ++k) CHECK(ab(k) == std::abs(av(k)));
}

TEST_CASE("unsigned, 8-bit and bool dtypes") {
  fusor::vector<std::uint8_t> u{"u"};
  auto wrapped = fusor::eval(u + std::uint8_t{10}, u = xt::xarray<std::uint8_t>{250, 1});
  CHECK(wrapped(0) == 4);  // uint8 arithmetic wraps, as in NumPy
  CHECK(wrapped(1) == 11);
  fusor::vector<bool> p{"p"};
  fusor::vector<bool> q{"q"};
  const xt::xarray<bool> pv = {true, true, false, false};
  const xt::xarray<bool> qv = {true, false, true, false};
  auto orr = fusor::eval(p + q, p = pv, q = qv);  // bool + bool is logical or in NumPy
  auto andd = fusor::eval(p * q, p = pv, q = qv);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(orr(k) == (pv(k) || qv(k)));
    CHECK(andd(k) == (pv(k) && qv(k)));
  }
  auto as_int = fusor::eval(fusor::cast<std::int32_t>(p) * 5, p = pv);
  CHECK(as_int(0) == 5);
  CHECK(as_int(2) == 0);
}

TEST_CASE("cast<T> converts like numpy's astype") {
  fusor::vector<double> x{"x"};
  auto r = fusor::eval(fusor::cast<std::int32_t>(x), x = xt::xarray<double>{8.9, -2.7, 0.0});
  CHECK(r(0) == 8);
  CHECK(r(1) == -2);
  auto w = fusor::eval(fusor::cast<std::int8_t>(fusor::cast<std::int32_t>(x)), x = xt::xarray<double>{312.0});
  CHECK(w(0) == 56);
  auto f = fusor::eval(fusor::cast<float>(x) * 2.0f, x = xt::xarray<double>{1.5});
  static_assert(std::is_same_v<decltype(f)::value_type, float>);
  CHECK(f(0) == 3.0f);
}

namespace {

// NaN, infinities and values out of every target's range, converted by
// x86-64 NumPy 1.24's astype (np.array(values).astype(t); for uint32 through
// a strided view, as NumPy's vectorised uint32 loop gives other values).
const std::vector<double> cast_sources{NAN, INFINITY, -INFINITY, 3e9, -3e9, 1e20, -1e20, 300.7, -300.7,
                                       70000.5, -70000.5, 9223372036854775808.0, 18446744073709551616.0, 5e9};

template <class T, class S>
void check_numpy_cast(const std::vector<T>& want) {
  fusor::vector<S> x{"x"};
  xt::xtensor<S, 1> values = xt::zeros<S>({cast_sources.size() * 3});  // each value three times: vector lanes and tail
  for (std::size_t i = 0; i < values.size(); ++i) values(i) = static_cast<S>(cast_sources[i % cast_sources.size()]);
  const auto got = fusor::eval(fusor::cast<T>(x), x = values);
  for (std::size_t i = 0; i < values.size(); ++i)
    CHECK_MESSAGE(got(i) == want[i % want.size()], "astype of ", cast_sources[i % cast_sources.size()]);
}

template <class S>
void check_numpy_casts() {
  check_numpy_cast<std::int8_t, S>({0, 0, 0, 0, 0, 0, 0, 44, -44, 112, -112, 0, 0, 0});
  check_numpy_cast<std::uint8_t, S>({0, 0, 0, 0, 0, 0, 0, 44, 212, 112, 144, 0, 0, 0});
  check_numpy_cast<std::int16_t, S>({0, 0, 0, 0, 0, 0, 0, 300, -300, 4464, -4464, 0, 0, 0});
  check_numpy_cast<std::uint16_t, S>({0, 0, 0, 0, 0, 0, 0, 300, 65236, 4464, 61072, 0, 0, 0});
  constexpr std::int32_t m32 = std::numeric_limits<std::int32_t>::min();
  check_numpy_cast<std::int32_t, S>({m32, m32, m32, m32, m32, m32, m32, 300, -300, 70000, -70000, m32, m32, m32});
  check_numpy_cast<std::uint32_t, S>({0, 0, 0, 3000000000u, 1294967296u, 0, 0, 300, 4294966996u, 70000, 4294897296u,
                                      0, 0, 705032704u});
  constexpr std::int64_t m64 = std::numeric_limits<std::int64_t>::min();
  check_numpy_cast<std::int64_t, S>({m64, m64, m64, 3000000000, -3000000000, m64, m64, 300, -300, 70000, -70000, m64,
                                     m64, 5000000000});
  constexpr std::uint64_t h = 9223372036854775808ull;
  check_numpy_cast<std::uint64_t, S>({h, 0, h, 3000000000ull, 18446744070709551616ull, 0, h, 300,
                                      18446744073709551316ull, 70000, 18446744073709481616ull, h, 0, 5000000000ull});
}

}  // namespace

TEST_CASE("cast<T> of NaN, infinities and out-of-range floats gives x86-64 NumPy's values") {
  // Found by the differential tests: fusor gave 0 for NaN and went through
  // int64 for int32 (3e9 became -1294967296); NumPy gives -2^31 for both.
  SUBCASE("from float64") { check_numpy_casts<double>(); }
  SUBCASE("from float32") { check_numpy_casts<float>(); }
}

TEST_CASE("NumPy broadcasting: rank extension, length-1 axes, both sides") {
  fusor::matrix<double> m{"m"};
  fusor::vector<double> v{"v"};
  fusor::matrix<double> col{"col"};
  xt::xtensor<double, 2> mv = {{1, 2, 3}, {4, 5, 6}};
  xt::xtensor<double, 1> vv = {10, 20, 30};
  xt::xtensor<double, 2> cv = {{100}, {200}};
  auto r = fusor::eval(m + v + col, m = mv, v = vv, col = cv);
  REQUIRE(r.shape()[0] == 2);
  REQUIRE(r.shape()[1] == 3);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(r(i, j) == mv(i, j) + vv(j) + cv(i, 0));
  // Outer product by broadcasting a column against a row.
  fusor::matrix<double> row{"row"};
  auto outer = fusor::eval(col * row, col = cv, row = xt::xtensor<double, 2>{{1, 2, 3, 4}});
  CHECK(outer.shape()[0] == 2);
  CHECK(outer.shape()[1] == 4);
  CHECK(outer(1, 3) == 800.0);
  // A shared scalar broadcasts too.
  auto k = fusor::shared(2.5, "k");
  auto scaled = fusor::eval(k * m, m = mv);
  CHECK(scaled(1, 2) == 15.0);
}

TEST_CASE("W4: exp(2*x*y + y) with x 200x500 and y (500) against a plain loop") {
  xt::xtensor<double, 2> xv(std::array<std::size_t, 2>{200, 500});
  xt::xtensor<double, 1> yv(std::array<std::size_t, 1>{500});
  for (std::size_t i = 0; i < 200; ++i)
    for (std::size_t j = 0; j < 500; ++j) xv(i, j) = 0.001 * static_cast<double>(i) - 0.0005 * static_cast<double>(j);
  for (std::size_t j = 0; j < 500; ++j) yv(j) = 0.002 * static_cast<double>(j);
  auto x = fusor::shared(xv, "x");
  auto y = fusor::shared(yv, "y");
  auto r = fusor::eval(fusor::exp(2.0 * x * y + y));
  double worst = 0;
  for (std::size_t i = 0; i < 200; ++i)
    for (std::size_t j = 0; j < 500; ++j) {
      const double ref = std::exp(2.0 * xv(i, j) * yv(j) + yv(j));
      worst = std::max(worst, std::fabs(r(i, j) - ref) / ref);
    }
  CHECK(worst < 1e-14);
}

TEST_CASE("a broadcast mismatch is a shape_error naming both shapes and the operation") {
  fusor::matrix<double> m{"m"};
  fusor::vector<double> v{"v"};
  try {
    (void)fusor::eval(m + v, m = xt::xtensor<double, 2>{{1, 2, 3}}, v = xt::xtensor<double, 1>{1, 2});
    FAIL("expected a shape_error");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "m + v"));
    CHECK(contains(e.what(), "(1, 3)"));
    CHECK(contains(e.what(), "(2,)"));
  }
}

TEST_CASE("bindings: missing, wrong rank, lossy dtype, broadcastable axes; safe upcasts convert") {
  fusor::vector<double> x{"x"};
  fusor::vector<double> y{"y"};
  CHECK_THROWS_AS((void)fusor::eval(x + y, x = xt::xarray<double>{1.0}), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(x * 2.0, x = xt::xarray<double>(xt::xtensor<double, 2>{{1.0}})), fusor::rank_error);
  fusor::vector<float> f{"f"};
  try {
    (void)fusor::eval(f * 2.f, f = xt::xarray<double>{1.0});
    FAIL("float64 into a float32 input must be refused");
  } catch (const fusor::dtype_error& e) {
    CHECK(contains(e.what(), "input 'f'"));
    CHECK(contains(e.what(), "float64"));
  }
  auto up = fusor::eval(x * 2.0, x = std::vector<std::int32_t>{1, 2});
  CHECK(up(1) == 4.0);
  fusor::matrix<double> row{"row", {true, false}};
  CHECK_THROWS_AS((void)fusor::eval(row * 2.0, row = xt::xtensor<double, 2>{{1, 2}, {3, 4}}), fusor::shape_error);
  auto ok = fusor::eval(row * 2.0, row = xt::xtensor<double, 2>{{1, 2}});
  CHECK(ok(0, 1) == 4.0);
}

TEST_CASE("expressions print readably") {
  fusor::matrix<float> x{"x"};
  auto W = fusor::shared(xt::xtensor<float, 2>{{1.f}}, "W");
  CHECK((2 * x + fusor::exp(W)).str() == "(2 * x) + exp(W)");
  CHECK((x * (x + 1.5f)).str() == "x * (x + 1.5)");
  CHECK((-x).str() == "-x");
  CHECK(fusor::where(x > 0.f, x, 0.f).str() == "where(x > 0, x, 0)");
  CHECK(fusor::sum(x * W, 1).str() == "sum(x * W, axis=1)");
  CHECK(fusor::mean(x, fusor::keepdims).str() == "mean(x, keepdims=True)");
  CHECK(fusor::dot(x, W).str() == "dot(x, W)");
  CHECK(fusor::cast<double>(x).str() == "cast<float64>(x)");
}

TEST_CASE("a shared variable is read as it is when evaluated, not when the expression was built") {
  auto s = fusor::shared(xt::xarray<double>{1.0, 2.0}, "s");
  auto e = s * 10.0;
  s.set_value(xt::xarray<double>{3.0, 4.0, 5.0});
  auto r = fusor::eval(e);
  CHECK(r == xt::xarray<double>{30.0, 40.0, 50.0});
}

TEST_CASE("unaligned borrowed buffers take the unaligned path and stay correct") {
  std::vector<double> storage(64, 0.0);
  for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<double>(i);
  // A registered user type whose data starts one element into the vector.
  xt::xarray<double> offset_view = xt::adapt(storage.data() + 1, 63, xt::no_ownership(), std::vector<std::size_t>{63});
  auto s = fusor::shared(offset_view);  // a copy (aligned)
  fusor::vector<double> x{"x"};
  std::vector<double> misaligned(storage.begin() + 1, storage.end());
  auto r = fusor::eval(x * 2.0 + s, x = misaligned);
  for (std::size_t i = 0; i < 63; ++i) CHECK(r(i) == 3.0 * static_cast<double>(i + 1));
}

TEST_CASE("where with a bool mask array, a bool constant or a comparison: the same values, vectorised or not") {
  // Lengths that cover whole batches and a tail, contiguous and broadcast masks.
  for (std::size_t n : {1u, 3u, 8u, 17u, 64u, 101u}) {
    CAPTURE(n);
    xt::xtensor<double, 1> a = xt::xtensor<double, 1>::from_shape({n}), b = a;
    xt::xtensor<bool, 1> m = xt::xtensor<bool, 1>::from_shape({n});
    for (std::size_t i = 0; i < n; ++i) {
      a(i) = double(i);
      b(i) = -double(i) - 1;
      m(i) = (i * 7) % 3 == 0;
    }
    fusor::vector<double> x{"x"}, y{"y"};
    fusor::vector<bool> mask{"mask"};
    // The host backend vectorises these (checked on the evaluator types).
    static_assert(fusor::cpu::evaluator_t<decltype(fusor::where(mask, x, y))>::simd);
    static_assert(fusor::cpu::evaluator_t<decltype(fusor::where(x > y * -0.5, x * 2.0, y))>::simd);
    static_assert(fusor::cpu::evaluator_t<decltype(fusor::where(true, x, y))>::simd);
    const xt::xtensor<double, 1> r = fusor::eval(fusor::where(mask, x, y), mask = m, x = a, y = b);
    const xt::xtensor<double, 1> c = fusor::eval(fusor::where(x > y * -0.5, x * 2.0, y), x = a, y = b);
    const xt::xtensor<double, 1> k = fusor::eval(fusor::where(true, x, y), x = a, y = b);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(r(i) == (m(i) ? a(i) : b(i)));
      CHECK(c(i) == (a(i) > b(i) * -0.5 ? a(i) * 2.0 : b(i)));
      CHECK(k(i) == a(i));
    }
    // A mask broadcast along rows of a matrix.
    fusor::matrix<float> X{"X"};
    xt::xtensor<float, 2> xm = xt::xtensor<float, 2>::from_shape({3, n});
    for (std::size_t i = 0; i < xm.size(); ++i) xm.data()[i] = float(i);
    const xt::xtensor<float, 2> rm = fusor::eval(fusor::where(mask, X, 0.0f), mask = m, X = xm);
    for (std::size_t r_ = 0; r_ < 3; ++r_)
      for (std::size_t i = 0; i < n; ++i) CHECK(rm(r_, i) == (m(i) ? xm(r_, i) : 0.0f));
  }
}

TEST_CASE_TEMPLATE("integer + - * and negation run vectorised and wrap exactly as the scalar loop", T, std::int32_t,
                   std::uint32_t, std::int64_t, std::uint64_t) {
  fusor::vector<T> x{"x"}, y{"y"}, z{"z"};
  constexpr bool mul_vectorised = sizeof(T) == 4;
  static_assert(fusor::cpu::evaluator_t<decltype(x + y - z)>::simd);
  static_assert(fusor::cpu::evaluator_t<decltype(-x + T(3))>::simd);
  static_assert(fusor::cpu::evaluator_t<decltype(x * y)>::simd == mul_vectorised);
  // Division and abs have no exact integer batch form: the scalar loop.
  static_assert(!fusor::cpu::evaluator_t<decltype(fusor::abs(x))>::simd);
  using U = std::make_unsigned_t<T>;
  auto wrap = [](U v) { return static_cast<T>(v); };  // modulo 2^n, defined in C++20
  for (std::size_t n : {1u, 3u, 8u, 17u, 64u, 101u}) {
    CAPTURE(n);
    xt::xtensor<T, 1> a = xt::xtensor<T, 1>::from_shape({n}), b = a, c = a;
    for (std::size_t i = 0; i < n; ++i) {
      // Values at and near the limits, so that every operation wraps somewhere.
      a(i) = wrap(static_cast<U>(std::numeric_limits<T>::max()) - static_cast<U>(i * 3));
      b(i) = wrap(static_cast<U>(i * 7919u + 2));
      c(i) = wrap(static_cast<U>(std::numeric_limits<T>::min()) + static_cast<U>(i));
    }
    const xt::xtensor<T, 1> s = fusor::eval(x + y - z, x = a, y = b, z = c);
    const xt::xtensor<T, 1> m = fusor::eval(x * y + z, x = a, y = b, z = c);
    const xt::xtensor<T, 1> g = fusor::eval(-x + T(3), x = a);
    for (std::size_t i = 0; i < n; ++i) {
      const U ua = static_cast<U>(a(i)), ub = static_cast<U>(b(i)), uc = static_cast<U>(c(i));
      CHECK(s(i) == wrap(static_cast<U>(ua + ub - uc)));
      CHECK(m(i) == wrap(static_cast<U>(ua * ub + uc)));
      CHECK(g(i) == wrap(static_cast<U>(U(3) - ua)));
    }
  }
}

TEST_CASE("clip's C++ bounds are weak: clip(float32 x, -0.5, 2.5) is float32, as np.clip gives") {
  // Found by the differential tests: the upper bound was promoted against the
  // lower one (two weak scalars: float64) instead of against x.
  fusor::vector<float> x{"x"};
  fusor::vector<std::int32_t> i{"i"};
  fusor::vector<double> d{"d"};
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::clip(x, -0.5, 2.5))>, float>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::clip(i, -1, 2))>, std::int32_t>);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::clip(i, -1, 2.5))>, double>);  // a float bound: float64
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::clip(x, d, 2.5))>, double>);    // a strong float64 bound
  static_assert(std::is_same_v<fusor::value_type_t<decltype(fusor::clip(x, -0.5, d))>, double>);
  const xt::xtensor<float, 1> got = fusor::eval(fusor::clip(x, -0.5, 2.5), x = xt::xtensor<float, 1>{-3.f, 1.25f, 7.f});
  CHECK(got == xt::xtensor<float, 1>{-0.5f, 1.25f, 2.5f});
}

// Rows shorter than a batch with a longer axis outside them (a softmax's
// gradient over ten classes, for 64 samples) run along that axis instead:
// the leaves are read across the rows, lane by lane, and each batch is stored
// lane by lane. Shorter and longer rows around the batch's width, outer axes
// shorter than a batch (no exchange), a block larger than the cache (no
// exchange either), a transposed leaf, a rank-3 space, and an update written
// in place: each against plain loops.
template <class T>
void check_short_rows() {
  fusor::matrix<T> x{"x"};
  fusor::matrix<T> col{"col"};
  fusor::vector<T> row{"row"};
  fusor::matrix<T> xt_{"xt"};
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  for (std::size_t rows : {1, 5, 16, 17, 64, 100, 4000})
    for (std::size_t cols : {1, 3, 7, 10, 15, 17}) {
      CAPTURE(rows);
      CAPTURE(cols);
      xt::xtensor<T, 2> a(std::array<std::size_t, 2>{rows, cols}), at(std::array<std::size_t, 2>{cols, rows});
      xt::xtensor<T, 2> c(std::array<std::size_t, 2>{rows, 1});
      xt::xtensor<T, 1> v(std::array<std::size_t, 1>{cols});
      for (std::size_t r = 0; r < rows; ++r) {
        c(r, 0) = static_cast<T>(0.125 * static_cast<double>(r % 9) - 0.5);
        for (std::size_t k = 0; k < cols; ++k) {
          a(r, k) = static_cast<T>(std::sin(0.37 * static_cast<double>(r * 131 + k)));
          at(k, r) = static_cast<T>(std::cos(0.11 * static_cast<double>(r * 17 + k)));
        }
      }
      for (std::size_t k = 0; k < cols; ++k) v(k) = static_cast<T>(1.0 + 0.5 * static_cast<double>(k));
      const xt::xtensor<T, 2> got =
          fusor::eval(fusor::exp(x - col) * row + fusor::transpose(xt_), x = a, col = c, row = v, xt_ = at);
      REQUIRE(got.shape() == a.shape());
      double worst = 0;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < cols; ++k) {
          const double want = std::exp(static_cast<double>(a(r, k)) - static_cast<double>(c(r, 0))) *
                                  static_cast<double>(v(k)) +
                              static_cast<double>(at(k, r));
          worst = std::max(worst, std::abs(static_cast<double>(got(r, k)) - want) / (1.0 + std::abs(want)));
        }
      CHECK(worst <= tol);

      // In place: the update reads the variable where it writes it.
      auto s = fusor::shared(a, "s");
      const void* before = fusor_test::address(s.get_value(fusor::borrow));
      auto step = fusor::function(fusor::inputs(row), fusor::updates(fusor::update(s, s * T(2) + row)));
      step(v);
      CHECK(step.update_was_in_place(0));
      CHECK(fusor_test::address(s.get_value(fusor::borrow)) == before);
      const xt::xtensor<T, 2> updated = s.get_value();
      bool exact = true;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < cols; ++k) exact = exact && updated(r, k) == a(r, k) * T(2) + v(k);
      CHECK(exact);
    }

  // Rank 3: the exchanged axes are the last two, under an outer one.
  fusor::tensor<T, 3> c3{"c3"};
  xt::xtensor<T, 3> b(std::array<std::size_t, 3>{3, 40, 6});
  for (std::size_t i = 0; i < b.size(); ++i) b.flat(i) = static_cast<T>(0.01 * static_cast<double>(i % 97) - 0.3);
  const xt::xtensor<T, 3> got3 = fusor::eval(c3 * c3 + row, c3 = b, row = xt::xtensor<T, 1>{1, 2, 3, 4, 5, 6});
  bool exact3 = true;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 40; ++j)
      for (std::size_t k = 0; k < 6; ++k) exact3 = exact3 && got3(i, j, k) == b(i, j, k) * b(i, j, k) + T(k + 1);
  CHECK(exact3);
}

TEST_CASE("rows shorter than a batch run along the axis outside them, vectorised (vs plain loops)") {
  check_short_rows<float>();
  check_short_rows<double>();
}
