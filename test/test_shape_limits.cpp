// Shapes no array can have: wherever fusor multiplies extents (reshape,
// broadcasting, dot, allocation, values of registered types) a product beyond
// NumPy's limit (2^63 - 1 bytes) is a shape_error naming the shape, never a
// product taken modulo 2^64 that a loop would then trust.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::contains;
constexpr fusor::index_t two32 = fusor::index_t{1} << 32;
constexpr fusor::index_t two40 = fusor::index_t{1} << 40;
constexpr fusor::index_t two62 = fusor::index_t{1} << 62;

/// A user type that reports whatever shape it is given, over no memory.
struct liar {
  fusor::dims shape;
};
}  // namespace

template <>
struct fusor::shared_constructor<liar> {
  using element_type = double;
  static constexpr int rank = 2;
  static fusor::dims shape(const liar& l) { return l.shape; }
  static const double* data(const liar&) { return nullptr; }
  static liar make(const fusor::dims& d, const double*) { return {d}; }
};

TEST_CASE("fits: NumPy's limit, checked without overflowing") {
  CHECK(fusor::fits(fusor::dims{}, 8));
  CHECK(fusor::fits(fusor::dims{0, std::size_t{1} << 59}, 8));
  CHECK_FALSE(fusor::fits(fusor::dims{0, std::size_t{1} << 60}, 8));
  CHECK(fusor::fits(fusor::dims{std::size_t{1} << 31, std::size_t{1} << 28}, 8));        // 2^62 bytes
  CHECK_FALSE(fusor::fits(fusor::dims{std::size_t{1} << 31, std::size_t{1} << 29}, 8));  // 2^63 bytes
  CHECK_FALSE(fusor::fits(fusor::dims{(std::size_t{1} << 62) + 1, 4}, 1));
  CHECK_FALSE(fusor::fits(fusor::dims{std::size_t{1} << 32, std::size_t{1} << 32}, 1));  // wraps to 0 mod 2^64
  CHECK_FALSE(fusor::fits(fusor::dims{0, std::size_t{1} << 62, 4}, 1));                 // empty, strides overflow
}

TEST_CASE("reshape refuses an extent product that only matches modulo 2^64") {
  fusor::vector<double> x{"x"};
  const xt::xtensor<double, 1> four = {1, 2, 3, 4};
  try {
    (void)fusor::eval(fusor::reshape(x, {two62 + 1, 4}), x = four);
    FAIL("reshape to (2^62 + 1, 4) of four elements was accepted");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "(4611686018427387905, 4)"));
    CHECK(contains(e.what(), "too large"));
  }
  const xt::xtensor<double, 1> empty = xt::xtensor<double, 1>::from_shape({0});
  CHECK_THROWS_AS((void)fusor::eval(fusor::reshape(x, {two32, two32}), x = empty), fusor::shape_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::sum(fusor::reshape(x, {0, two62, 4})), x = empty), fusor::shape_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::reshape(x, {-1, two62, 4}), x = four), fusor::shape_error);
  // Honest reshapes still work, the empty ones included.
  const xt::xtensor<double, 2> r = fusor::eval(fusor::reshape(x, {2, -1}), x = four);
  CHECK(r == xt::xtensor<double, 2>{{1, 2}, {3, 4}});
  const xt::xtensor<double, 2> e = fusor::eval(fusor::reshape(x, {0, two40}), x = empty);
  CHECK(e.size() == 0u);
  CHECK(e.shape()[1] == std::size_t(two40));
}

TEST_CASE("a broadcast of two possible shapes that no array can hold is refused") {
  fusor::vector<double> x{"x"};
  const xt::xtensor<double, 1> empty = xt::xtensor<double, 1>::from_shape({0});
  auto a = fusor::reshape(x, {0, two40, 1});
  auto b = fusor::reshape(x, {0, 1, two40});
  try {
    (void)fusor::eval(fusor::sum(a + b), x = empty);
    FAIL("a (0, 2^40, 2^40) broadcast was accepted");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "(0, 1099511627776, 1099511627776)"));
  }
}

TEST_CASE("dot refuses a result no array can hold") {
  fusor::vector<float> x{"x"};
  const xt::xtensor<float, 1> empty = xt::xtensor<float, 1>::from_shape({0});
  CHECK_THROWS_AS((void)fusor::eval(fusor::dot(fusor::reshape(x, {two40, 0}), fusor::reshape(x, {0, two40})),
                                    x = empty),
                  fusor::shape_error);
}

TEST_CASE("a registered value reporting an impossible shape is refused before anything is read") {
  const liar huge{{std::size_t(two40), std::size_t(two40)}};  // data() is null: reading it would crash
  try {
    auto s = fusor::shared(huge, "lie");
    FAIL("the shape (2^40, 2^40) was accepted");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "'lie'"));
    CHECK(contains(e.what(), "(1099511627776, 1099511627776)"));
  }
  auto s = fusor::shared(xt::xtensor<double, 2>{{1, 2}}, "s");
  CHECK_THROWS_AS(s.set_value(huge), fusor::shape_error);
  CHECK(s.get_value() == xt::xtensor<double, 2>{{1, 2}});
  fusor::matrix<double> m{"m"};
  CHECK_THROWS_AS((void)fusor::eval(m + 1.0, m = huge), fusor::shape_error);
}

TEST_CASE("allocating a shape no array can have is a shape_error, not a wrapped size") {
  CHECK_THROWS_AS(fusor::array<double>::allocate(fusor::dims{std::size_t{1} << 62, 4}), fusor::shape_error);
  CHECK_THROWS_AS(fusor::buffer::allocate(std::size_t{1} << 63), fusor::shape_error);
}
