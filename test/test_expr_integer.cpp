// Integer semantics: arithmetic wraps modulo 2^n (two's complement), as NumPy's
// does, and never reaches C++'s undefined behaviour (signed overflow, uint16
// promoted to int, a double converted out of range). Expected values are
// computed here in unsigned arithmetic, independently of fusor's helpers; the
// UBSan build of this file fails on any overflow that slips through.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::contains;

template <class T>
constexpr T lo = std::numeric_limits<T>::min();
template <class T>
constexpr T hi = std::numeric_limits<T>::max();

/// a op b mod 2^n, computed in uint64 and narrowed (C++20 defines the narrowing).
template <class T>
T wrap(std::uint64_t v) {
  return static_cast<T>(v);
}
}  // namespace

TEST_CASE_TEMPLATE("+, -, * wrap at the limits of every integer dtype", T, std::int8_t, std::uint8_t, std::int16_t,
                   std::uint16_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t) {
  fusor::vector<T> a{"a"}, b{"b"};
  const xt::xtensor<T, 1> av = {hi<T>, lo<T>, hi<T>, T(3), lo<T>};
  const xt::xtensor<T, 1> bv = {T(1), T(1), hi<T>, T(5), T(2)};
  const xt::xtensor<T, 1> sum = fusor::eval(a + b, a = av, b = bv);
  const xt::xtensor<T, 1> diff = fusor::eval(a - b, a = av, b = bv);
  const xt::xtensor<T, 1> prod = fusor::eval(a * b, a = av, b = bv);
  for (std::size_t i = 0; i < av.size(); ++i) {
    const auto x = static_cast<std::uint64_t>(av(i)), y = static_cast<std::uint64_t>(bv(i));
    CHECK(sum(i) == wrap<T>(x + y));
    CHECK(diff(i) == wrap<T>(x - y));
    CHECK(prod(i) == wrap<T>(x * y));
  }
}

TEST_CASE("int32 + and int64 * wrap as NumPy does") {
  fusor::vector<std::int32_t> a{"a"};
  const xt::xtensor<std::int32_t, 1> av = {hi<std::int32_t>, lo<std::int32_t>};
  const xt::xtensor<std::int32_t, 1> r = fusor::eval(a + 1, a = av);
  CHECK(r(0) == lo<std::int32_t>);  // np.int32(2**31 - 1) + 1 == -2**31
  CHECK(r(1) == lo<std::int32_t> + 1);
  fusor::vector<std::int64_t> c{"c"};
  const xt::xtensor<std::int64_t, 1> cv = {std::int64_t{1} << 62, 3037000500};
  const xt::xtensor<std::int64_t, 1> m = fusor::eval(c * c, c = cv);
  CHECK(m(0) == 0);                      // 2^124 mod 2^64
  CHECK(m(1) == -9223372036709301616);   // np.int64(3037000500) ** 2
  // uint16 * uint16 promotes to int in C++: 65535 * 65535 must not overflow it.
  fusor::vector<std::uint16_t> u{"u"};
  const xt::xtensor<std::uint16_t, 1> sq = fusor::eval(u * u, u = xt::xtensor<std::uint16_t, 1>{65535});
  CHECK(sq(0) == 1);
}

TEST_CASE_TEMPLATE("unary - and abs at the minimum value wrap to the minimum", T, std::int8_t, std::int16_t,
                   std::int32_t, std::int64_t) {
  fusor::vector<T> a{"a"};
  const xt::xtensor<T, 1> av = {lo<T>, T(-5), T(7)};
  const xt::xtensor<T, 1> neg = fusor::eval(-a, a = av);
  const xt::xtensor<T, 1> ab = fusor::eval(fusor::abs(a), a = av);
  CHECK(neg(0) == lo<T>);  // np.negative(np.int32(-2**31)) == -2**31
  CHECK(neg(1) == T(5));
  CHECK(neg(2) == T(-7));
  CHECK(ab(0) == lo<T>);   // np.abs(np.int32(-2**31)) == -2**31
  CHECK(ab(1) == T(5));
  CHECK(ab(2) == T(7));
}

TEST_CASE("unary - of unsigned integers wraps") {
  fusor::vector<std::uint32_t> a{"a"};
  const xt::xtensor<std::uint32_t, 1> r = fusor::eval(-a, a = xt::xtensor<std::uint32_t, 1>{1, 0});
  CHECK(r(0) == hi<std::uint32_t>);
  CHECK(r(1) == 0u);
}

TEST_CASE("integer pow is exact integer exponentiation that wraps") {
  fusor::vector<std::int64_t> a{"a"}, b{"b"};
  const xt::xtensor<std::int64_t, 1> av = {3, 2, -2, 0, 7, -1, 10};
  const xt::xtensor<std::int64_t, 1> bv = {4, 62, 63, 0, 0, 7, 30};
  const xt::xtensor<std::int64_t, 1> r = fusor::eval(fusor::pow(a, b), a = av, b = bv);
  CHECK(r(0) == 81);
  CHECK(r(1) == std::int64_t{1} << 62);
  CHECK(r(2) == lo<std::int64_t>);       // (-2)^63 wraps to -2^63 exactly
  CHECK(r(3) == 1);                      // 0^0 == 1, as NumPy
  CHECK(r(4) == 1);
  CHECK(r(5) == -1);
  CHECK(r(6) == wrap<std::int64_t>(1000000000000000000ull * 1000000000000ull));  // 10^30 mod 2^64
  // int32 overflow: 3^40 mod 2^32 (np.int32(3) ** 40 == -501532415 ... computed in uint64 here)
  fusor::vector<std::int32_t> c{"c"};
  const xt::xtensor<std::int32_t, 1> p = fusor::eval(fusor::pow(c, 40), c = xt::xtensor<std::int32_t, 1>{3});
  std::uint64_t expect = 1;
  for (int i = 0; i < 40; ++i) expect *= 3;
  CHECK(p(0) == wrap<std::int32_t>(expect));
  // unsigned, with a constant exponent
  fusor::vector<std::uint8_t> u{"u"};
  const xt::xtensor<std::uint8_t, 1> q = fusor::eval(fusor::pow(u, 3), u = xt::xtensor<std::uint8_t, 1>{7, 255});
  CHECK(q(0) == std::uint8_t(343 % 256));
  CHECK(q(1) == std::uint8_t(255));  // 255^3 = 16581375 = 255 mod 256
}

TEST_CASE("integer pow with a negative exponent is an error, as in NumPy, and changes nothing") {
  fusor::vector<std::int32_t> a{"a"}, b{"b"};
  const xt::xtensor<std::int32_t, 1> av = {2, 3}, bv = {1, -1};
  try {
    (void)fusor::eval(fusor::pow(a, b), a = av, b = bv);
    FAIL("a negative integer exponent was accepted");
  } catch (const fusor::value_error& e) {
    CHECK(contains(e.what(), "negative"));
    CHECK(contains(e.what(), "pow(a, b)"));
  }
  // A constant negative exponent too.
  CHECK_THROWS_AS((void)fusor::eval(fusor::pow(a, -2), a = av), fusor::value_error);
  // A compound exponent is checked as computed, after its casts.
  fusor::vector<std::int8_t> small{"small"};
  CHECK_THROWS_AS((void)fusor::eval(fusor::pow(a, small - 1), a = av, small = xt::xtensor<std::int8_t, 1>{1, 0}),
                  fusor::value_error);
  // Floats: negative exponents are fine.
  fusor::vector<double> d{"d"};
  const xt::xtensor<double, 1> f = fusor::eval(fusor::pow(d, -1.0), d = xt::xtensor<double, 1>{2, 4});
  CHECK(f(0) == 0.5);
  CHECK(f(1) == 0.25);
  // In a function: the failed call installs no update.
  auto w = fusor::shared(xt::xtensor<std::int32_t, 1>{5, 6}, "w");
  auto g = fusor::function(fusor::inputs(b), fusor::updates(fusor::update(w, fusor::pow(w, b))));
  const void* before = w.get_value(fusor::borrow).data();
  CHECK_THROWS_AS(g(bv), fusor::value_error);
  CHECK(w.get_value() == xt::xtensor<std::int32_t, 1>{5, 6});
  CHECK(w.get_value(fusor::borrow).data() == before);
  g(xt::xtensor<std::int32_t, 1>{2, 0});
  CHECK(w.get_value() == xt::xtensor<std::int32_t, 1>{25, 1});
}

TEST_CASE("integer sum and prod wrap in their 64-bit accumulators") {
  fusor::vector<std::int64_t> a{"a"};
  const xt::xtensor<std::int64_t, 1> av = {hi<std::int64_t>, 1, 1};
  CHECK(fusor::eval(fusor::sum(a), a = av) == lo<std::int64_t> + 1);
  const xt::xtensor<std::int64_t, 1> big = {std::int64_t{1} << 32, std::int64_t{1} << 32, 3};
  CHECK(fusor::eval(fusor::prod(a), a = big) == 0);  // 2^64 * 3 mod 2^64
  fusor::matrix<std::uint64_t> u{"u"};
  const xt::xtensor<std::uint64_t, 2> uv = {{hi<std::uint64_t>, 2}, {1, 3}};
  const xt::xtensor<std::uint64_t, 1> col = fusor::eval(fusor::sum(u, 0), u = uv);
  CHECK(col(0) == 0u);
  CHECK(col(1) == 5u);
}

TEST_CASE("integer dot wraps") {
  fusor::vector<std::int32_t> a{"a"};
  fusor::matrix<std::int32_t> m{"m"};
  const xt::xtensor<std::int32_t, 1> av = {hi<std::int32_t>, 2};
  CHECK(fusor::eval(fusor::dot(a, a), a = av) == wrap<std::int32_t>(std::uint64_t(hi<std::int32_t>) *
                                                                         std::uint64_t(hi<std::int32_t>) + 4));
  const xt::xtensor<std::int32_t, 2> mv = {{hi<std::int32_t>, 1}, {1, 1}};
  const xt::xtensor<std::int32_t, 1> mvv = fusor::eval(fusor::dot(m, a), m = mv, a = av);
  CHECK(mvv(0) == wrap<std::int32_t>(std::uint64_t(hi<std::int32_t>) * std::uint64_t(hi<std::int32_t>) + 2));
  CHECK(mvv(1) == wrap<std::int32_t>(std::uint64_t(hi<std::int32_t>) + 2));
  fusor::vector<std::uint16_t> u{"u"};
  CHECK(fusor::eval(fusor::dot(u, u), u = xt::xtensor<std::uint16_t, 1>{65535, 65535}) == std::uint16_t(2));
}
