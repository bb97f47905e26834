// shared<T>: construction with and without borrow, every get_value / set_value
// form of the README's table of calls, .value(), zero(), take_value(), casting (R28–R29) and
// shape rules (R22). Aliasing is checked by data address.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::address;
using fusor_test::contains;
}  // namespace

TEST_CASE("constructor: default and copy deep-copy, borrow aliases (seeds §'Borrowing when creating')") {
  xt::xarray<float> np_array = xt::ones<float>({2});
  auto s_default = fusor::shared(np_array);
  auto s_false = fusor::shared(np_array, fusor::copy);
  auto s_true = fusor::shared(np_array, fusor::borrow);
  np_array += 1;
  CHECK(s_default.get_value() == xt::xarray<float>{1, 1});
  CHECK(s_false.get_value() == xt::xarray<float>{1, 1});
  CHECK(s_true.get_value() == xt::xarray<float>{2, 2});
  CHECK(address(s_true.get_value(fusor::borrow)) == address(np_array));
  CHECK(address(s_default.get_value(fusor::borrow)) != address(np_array));
  CHECK(address(s_false.get_value(fusor::borrow)) != address(np_array));
}

TEST_CASE("a moved-in value is adopted without copying its elements") {
  xt::xtensor<double, 2> w = {{1, 2}, {3, 4}};
  const void* where = w.data();
  auto s = fusor::shared(std::move(w), "W");
  CHECK(s.name() == "W");
  CHECK(address(s.get_value(fusor::borrow)) == where);
  CHECK(s.get_value() == xt::xtensor<double, 2>{{1, 2}, {3, 4}});
}

TEST_CASE("get_value() is a deep copy of type T, never aliased (R15)") {
  auto s = fusor::shared(xt::xarray<double>{1., 2., 3.});
  xt::xarray<double> v = s.get_value();
  static_assert(std::is_same_v<decltype(s.get_value()), xt::xarray<double>>);
  CHECK(address(v) != address(s.get_value(fusor::borrow)));
  v(0) = 100;
  CHECK(s.get_value()(0) == 1.);
}

TEST_CASE("get_value(borrow) is a read-only O(1) view of the storage (R16)") {
  auto s = fusor::shared(xt::xtensor<float, 2>{{1, 2, 3}, {4, 5, 6}});
  auto v1 = s.get_value(fusor::borrow);
  auto v2 = s.get_value(fusor::borrow);
  CHECK(address(v1) == address(v2));
  CHECK(v1(1, 2) == 6.f);
  CHECK(v1.shape() == fusor::dims{2, 3});
  CHECK(xt::sum(v1.xt())() == doctest::Approx(21.f));
  static_assert(std::is_same_v<decltype(v1.data()), const float*>);
}

TEST_CASE("a view keeps old storage alive and keeps the old values after set_value (R23)") {
  auto s = fusor::shared(xt::xarray<int>{1, 2, 3});
  auto old_view = s.get_value(fusor::borrow);
  const void* old_address = address(old_view);
  s.set_value(xt::xarray<int>{7, 8, 9});
  CHECK(old_view == xt::xarray<int>{1, 2, 3});
  CHECK(address(old_view) == old_address);
  CHECK(address(s.get_value(fusor::borrow)) != old_address);
  CHECK(s.get_value() == xt::xarray<int>{7, 8, 9});
}

TEST_CASE("get_value(borrow, internal_type) is the storage object itself; (copy, internal_type) deep-copies") {
  auto s = fusor::shared(xt::xarray<double>{1., 2.});
  fusor::array<double> internal = s.get_value(fusor::borrow, fusor::internal_type);
  CHECK(internal.data() == s.get_value(fusor::borrow).data());
  CHECK(internal.space() == fusor::host);
  fusor::array<double> internal_copy = s.get_value(fusor::copy, fusor::internal_type);
  CHECK(internal_copy.data() != internal.data());
  CHECK(internal_copy.data()[1] == 2.);
  CHECK(internal_copy.shape() == fusor::dims{2});
}

TEST_CASE("set_value(v) copies; set_value(move(v)) adopts; set_value(v, borrow) aliases (R19, R21)") {
  auto s = fusor::shared(xt::xarray<float>{0.f, 0.f});
  xt::xarray<float> a = {1.f, 2.f};
  s.set_value(a);
  CHECK(address(s.get_value(fusor::borrow)) != address(a));
  a(0) = 50.f;
  CHECK(s.get_value()(0) == 1.f);

  xt::xarray<float> b = {3.f, 4.f, 5.f};  // the shape may change (R22)
  const void* where = b.data();
  s.set_value(std::move(b));
  CHECK(address(s.get_value(fusor::borrow)) == where);
  CHECK(s.shape() == fusor::dims{3});

  xt::xarray<float> c = {6.f, 7.f};
  s.set_value(c, fusor::borrow);
  CHECK(address(s.get_value(fusor::borrow)) == address(c));
  c(1) = 70.f;
  CHECK(s.get_value()(1) == 70.f);
}

TEST_CASE("set_value(v, borrow) with another dtype converts into fresh storage (R21)") {
  auto s = fusor::shared(xt::xarray<double>{0., 0.});
  xt::xarray<float> f = {1.5f, 2.5f};
  s.set_value(f, fusor::borrow);
  CHECK(address(s.get_value(fusor::borrow)) != address(f));
  CHECK(s.get_value() == xt::xarray<double>{1.5, 2.5});
}

TEST_CASE("values of other registered types go in through the same rules") {
  auto s = fusor::shared(xt::xarray<double>{0.});
  s.set_value(std::vector<double>{1., 2., 3.});
  CHECK(s.get_value() == xt::xarray<double>{1., 2., 3.});
  s.set_value(std::vector<std::int32_t>{4, 5});  // int32 -> float64 is a safe upcast
  CHECK(s.get_value() == xt::xarray<double>{4., 5.});
}

TEST_CASE("scalars: rank 0, always copied (R9), exact-value rule for other dtypes (R29)") {
  double x = 7.0;
  auto s = fusor::shared(x, fusor::borrow);
  CHECK(s.rank() == 0);
  CHECK(s.get_value() == 7.0);
  CHECK(address(s.get_value(fusor::borrow)) != static_cast<const void*>(&x));
  CHECK(double(s.get_value(fusor::borrow)) == 7.0);

  auto i = fusor::shared(std::int64_t{7}, "i");
  CHECK_THROWS_AS(i.set_value(8.23), fusor::dtype_error);
  CHECK(i.get_value() == 7);
  i.set_value(8.0);  // exact: accepted and stored as int64 8
  CHECK(i.get_value() == 8);

  auto d = fusor::shared(std::int64_t{7}, {.name = "d", .allow_downcast = true});
  d.set_value(8.23);
  CHECK(d.get_value() == 8);

  auto strict = fusor::shared(std::int64_t{7}, {.name = "k", .strict = true});
  CHECK_THROWS_AS(strict.set_value(8), fusor::dtype_error);  // an int is not an int64 (R29)
  CHECK_THROWS_AS(strict.set_value(8.0), fusor::dtype_error);
  strict.set_value(std::int64_t{8});
  CHECK(strict.get_value() == 8);
}

TEST_CASE("exact-value rule at the edges of the ranges: refused without undefined behaviour") {
  // INT_MAX rounds to 2^31 in float32, which int32 cannot hold: a raw cast
  // back would be undefined. Refused, and the variable keeps its value.
  auto f = fusor::shared(1.5f, "f");
  CHECK_THROWS_AS(f.set_value(std::numeric_limits<std::int32_t>::max()), fusor::dtype_error);
  CHECK_THROWS_AS(f.set_value(std::numeric_limits<std::int64_t>::max()), fusor::dtype_error);
  CHECK_THROWS_AS(f.set_value(std::numeric_limits<std::uint64_t>::max()), fusor::dtype_error);
  CHECK_THROWS_AS(f.set_value(std::numeric_limits<std::int32_t>::min() + 1), fusor::dtype_error);
  CHECK(f.get_value() == 1.5f);
  f.set_value(16777216);  // 2^24: exact in float32
  CHECK(f.get_value() == 16777216.0f);
  f.set_value(std::numeric_limits<std::int32_t>::min());  // -2^31: exact too
  CHECK(f.get_value() == -2147483648.0f);
  CHECK_THROWS_AS(f.set_value(16777217), fusor::dtype_error);
  // Into an int32 variable from double: 2^31 - 1 is exact, 2^31 is not (a raw
  // conversion of 2^31 to int32 would be undefined).
  auto d = fusor::shared(0.0f, "d");
  auto k = fusor::shared(std::int32_t{0}, "k");
  k.set_value(2147483647.0);
  CHECK(k.get_value() == std::numeric_limits<std::int32_t>::max());
  CHECK_THROWS_AS(k.set_value(2147483648.0), fusor::dtype_error);
  CHECK_THROWS_AS(k.set_value(-9.3e18), fusor::dtype_error);
  CHECK(k.get_value() == std::numeric_limits<std::int32_t>::max());
  auto big = fusor::shared(std::uint64_t{0}, "big");
  big.set_value(9223372036854775808.0);  // 2^63 fits uint64 exactly
  CHECK(big.get_value() == std::uint64_t{1} << 63);
  CHECK_THROWS_AS(big.set_value(18446744073709551616.0), fusor::dtype_error);  // 2^64 does not
  // A double NaN or infinity is exactly a float32 NaN or infinity.
  d.set_value(std::numeric_limits<double>::infinity());
  CHECK(d.get_value() == std::numeric_limits<float>::infinity());
  d.set_value(std::numeric_limits<double>::quiet_NaN());
  CHECK(std::isnan(d.get_value()));
  // Integers: out of range, refused; -1 into uint8 too.
  auto u = fusor::shared(std::uint8_t{3}, "u");
  CHECK_THROWS_AS(u.set_value(-1), fusor::dtype_error);
  CHECK_THROWS_AS(u.set_value(1e300), fusor::dtype_error);
  CHECK_THROWS_AS(u.set_value(std::numeric_limits<double>::quiet_NaN()), fusor::dtype_error);
  CHECK(u.get_value() == 3);
  // The same rule for a C++ number given to a scalar<float> input.
  fusor::scalar<float> x{"x"};
  auto fn = fusor::function(fusor::inputs(x), fusor::outputs(x * 2.0f));
  CHECK_THROWS_AS(fn(std::numeric_limits<std::int32_t>::max()), fusor::dtype_error);
  CHECK(fn(3) == 6.0f);
}

TEST_CASE("conversions with allow_downcast follow astype without undefined behaviour") {
  auto i = fusor::shared(std::int32_t{0}, {.name = "i", .allow_downcast = true});
  i.set_value(1e300);  // out of int32's range: -2^31, as np.array(1e300).astype(np.int32)
  CHECK(i.get_value() == std::numeric_limits<std::int32_t>::min());
  i.set_value(-3.9);
  CHECK(i.get_value() == -3);
  i.set_value(4294967297.0);  // 2^32 + 1: out of int32's range too (NumPy does not wrap it)
  CHECK(i.get_value() == std::numeric_limits<std::int32_t>::min());
  auto u = fusor::shared(std::uint64_t{0}, {.name = "u", .allow_downcast = true});
  u.set_value(1.8e19);  // within uint64 only
  CHECK(u.get_value() == std::uint64_t(18000000000000000000ull));
  u.set_value(-1.0);  // through int64, wrapped
  CHECK(u.get_value() == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("casting rules for arrays (R28, R29)") {
  auto f32 = fusor::shared(xt::xtensor<float, 2>(xt::zeros<float>({5, 5})), "w");
  xt::xtensor<double, 2> random = xt::ones<double>({5, 5}) * 0.3;
  try {
    f32.set_value(random);
    FAIL("float64 into float32 must be refused");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, "shared variable 'w'"));
    CHECK(contains(m, "float32"));
    CHECK(contains(m, "float64"));
    CHECK(contains(m, "allow_downcast"));
  }
  CHECK(f32.get_value()(0, 0) == 0.f);

  auto f64 = fusor::shared(xt::xarray<double>{0., 0., 0.});
  f64.set_value(xt::xarray<float>{1.f, 2.f, 3.f});  // upcast accepted
  CHECK(f64.get_value() == xt::xarray<double>{1., 2., 3.});
  f64.set_value(xt::xarray<std::int64_t>{4, 5});  // int64 -> float64 accepted, as NumPy does
  CHECK(f64.get_value() == xt::xarray<double>{4., 5.});

  auto i8 = fusor::shared(xt::xarray<std::int8_t>{0});
  CHECK_THROWS_AS(i8.set_value(xt::xarray<std::int16_t>{1}), fusor::dtype_error);
  CHECK_THROWS_AS(i8.set_value(xt::xarray<std::uint8_t>{1}), fusor::dtype_error);

  auto wrap = fusor::shared(xt::xarray<std::int8_t>{0}, {.allow_downcast = true});
  wrap.set_value(xt::xarray<std::int32_t>{312});
  CHECK(wrap.get_value()(0) == 56);  // wraps as NumPy's astype does
  auto trunc = fusor::shared(xt::xarray<std::int32_t>{0}, {.allow_downcast = true});
  trunc.set_value(xt::xarray<double>{8.23, -2.7});
  CHECK(trunc.get_value() == xt::xarray<std::int32_t>{8, -2});

  auto strict = fusor::shared(xt::xarray<double>{0.}, {.name = "s", .strict = true});
  try {
    strict.set_value(xt::xarray<float>{1.f});
    FAIL("strict refuses float32");
  } catch (const fusor::dtype_error& e) {
    CHECK(contains(e.what(), "strict"));
    CHECK(contains(e.what(), "float64"));
    CHECK(contains(e.what(), "float32"));
  }
}

TEST_CASE("shape rules: rank fixed, shape free, broadcastable axes stay 1 (R22)") {
  auto v = fusor::shared(xt::xarray<double>{1., 2.}, "v");
  try {
    v.set_value(xt::xtensor<double, 2>{{1., 2.}, {3., 4.}});
    FAIL("rank change refused");
  } catch (const fusor::rank_error& e) {
    CHECK(contains(e.what(), "shared variable 'v'"));
    CHECK(contains(e.what(), "expected 1, got 2 with shape (2, 2)"));
  }
  v.set_value(xt::xarray<double>{1., 2., 3., 4.});
  CHECK(v.shape() == fusor::dims{4});

  auto row = fusor::shared(xt::xarray<float>(xt::xtensor<float, 2>{{1.f, 2.f, 3.f}}),
                           {.name = "row", .broadcastable = {true, false}});
  CHECK(row.broadcastable() == std::vector<bool>{true, false});
  row.set_value(xt::xtensor<float, 2>{{4.f, 5.f}});
  CHECK(row.shape() == fusor::dims{1, 2});
  try {
    row.set_value(xt::xtensor<float, 2>{{1.f}, {2.f}});
    FAIL("broadcastable axis refused");
  } catch (const fusor::shape_error& e) {
    CHECK(contains(e.what(), "shared variable 'row'"));
    CHECK(contains(e.what(), "axis 0 is broadcastable"));
    CHECK(contains(e.what(), "(2, 1)"));
  }
  CHECK_THROWS_AS(fusor::shared(xt::xarray<float>(xt::xtensor<float, 2>{{1.f}, {2.f}}), {.broadcastable = {true, false}}),
                  fusor::shape_error);
  CHECK_THROWS_AS(fusor::shared(xt::xarray<float>{1.f}, {.broadcastable = {true, false}}), fusor::value_error);
}

TEST_CASE("a refused set_value leaves the old value and buffer untouched") {
  xt::xarray<float> user = {1.f, 2.f};
  auto s = fusor::shared(user, fusor::borrow, {.name = "s", .broadcastable = {false}});
  const auto before = s.get_value(fusor::borrow).data();
  const auto generation = s.record()->generation();
  CHECK_THROWS_AS(s.set_value(xt::xarray<double>{9., 9.}), fusor::dtype_error);
  CHECK_THROWS_AS(s.set_value(xt::xtensor<float, 2>{{9.f}}), fusor::rank_error);
  xt::xarray<double> lossy = {9., 9.};
  CHECK_THROWS_AS(s.set_value(lossy, fusor::borrow), fusor::dtype_error);
  CHECK(s.get_value(fusor::borrow).data() == before);
  CHECK(s.get_value(fusor::borrow).data() == user.data());
  CHECK(s.get_value() == xt::xarray<float>{1.f, 2.f});
  CHECK(s.record()->generation() == generation);
}

TEST_CASE(".value() borrows iff config().shared_value_borrows, read at each access (R32)") {
  xt::xarray<double> a = {1., 2.};
  auto s = fusor::shared(xt::xarray<double>{0., 0.});
  REQUIRE(fusor::config().shared_value_borrows);  // the default
  s.value(a);
  CHECK(address(s.get_value(fusor::borrow)) == address(a));
  CHECK(address(s.value()) == address(a));

  fusor::config().shared_value_borrows = false;
  CHECK(address(s.value()) != address(a));
  CHECK(s.value() == xt::xarray<double>{1., 2.});
  xt::xarray<double> b = {3., 4.};
  s.value(b);
  CHECK(address(s.get_value(fusor::borrow)) != address(b));
  CHECK(s.get_value() == xt::xarray<double>{3., 4.});
  fusor::config().shared_value_borrows = true;
  s.value(b);
  CHECK(address(s.get_value(fusor::borrow)) == address(b));
}

TEST_CASE("zero() replaces the buffer; zero(borrow) writes zeros in place (R25)") {
  xt::xarray<double> user = {1., 2., 3.};
  auto s = fusor::shared(user, fusor::borrow);
  auto view = s.get_value(fusor::borrow);
  s.zero();
  CHECK(s.get_value() == xt::xarray<double>{0., 0., 0.});
  CHECK(user == xt::xarray<double>{1., 2., 3.});
  CHECK(view == xt::xarray<double>{1., 2., 3.});
  CHECK(address(s.get_value(fusor::borrow)) != address(user));

  s.set_value(user, fusor::borrow);
  auto aliased_view = s.get_value(fusor::borrow);
  s.zero(fusor::borrow);
  CHECK(user == xt::xarray<double>{0., 0., 0.});
  CHECK(aliased_view == xt::xarray<double>{0., 0., 0.});
  CHECK(address(s.get_value(fusor::borrow)) == address(user));
}

TEST_CASE("take_value() moves an adopted value out in O(1) and empties the variable") {
  xt::xarray<float> w = {1.f, 2.f, 3.f};
  const void* where = w.data();
  auto s = fusor::shared(std::move(w), "w");
  xt::xarray<float> out = s.take_value();
  CHECK(static_cast<const void*>(out.data()) == where);
  CHECK_FALSE(s.has_value());
  try {
    (void)s.get_value();
    FAIL("an empty variable refuses reads");
  } catch (const fusor::value_error& e) {
    CHECK(contains(e.what(), "shared variable 'w' has no value"));
  }
  out *= 2.f;  // the in-place pattern: modify, then give it back in O(1)
  s.set_value(std::move(out));
  CHECK(s.get_value() == xt::xarray<float>{2.f, 4.f, 6.f});
  CHECK(address(s.get_value(fusor::borrow)) == where);

  auto copied = fusor::shared(xt::xarray<float>{1.f});
  auto view = copied.get_value(fusor::borrow);  // a live view forces a copy
  xt::xarray<float> taken = copied.take_value();
  CHECK(address(taken) != address(view));
  CHECK(view == xt::xarray<float>{1.f});
}

TEST_CASE("std::vector values: rank 1, borrow aliases, get_value returns a vector") {
  std::vector<std::int32_t> v{1, 2, 3};
  auto s = fusor::shared(v, fusor::borrow);
  CHECK(s.rank() == 1);
  CHECK(address(s.get_value(fusor::borrow)) == address(v));
  v[0] = 10;
  const std::vector<std::int32_t> copy = s.get_value();
  CHECK(copy == std::vector<std::int32_t>{10, 2, 3});
  CHECK(address(copy) != address(v));
}

TEST_CASE("every element type round-trips") {
  auto check = [](auto zero) {
    using E = decltype(zero);
    xt::xarray<E> a = {E(1), E(0), E(1)};
    auto s = fusor::shared(a);
    CHECK(s.dtype() == fusor::dtype_of<E>);
    CHECK(s.get_value() == a);
  };
  check(bool{});
  check(std::int8_t{});
  check(std::uint8_t{});
  check(std::int16_t{});
  check(std::uint16_t{});
  check(std::int32_t{});
  check(std::uint32_t{});
  check(std::int64_t{});
  check(std::uint64_t{});
  check(float{});
  check(double{});
}

TEST_CASE("empty and one-element values") {
  auto e = fusor::shared(xt::xarray<double>(xt::xarray<double>::shape_type{0}));
  CHECK(e.shape() == fusor::dims{0});
  CHECK(e.get_value().size() == 0);
  e.set_value(xt::xarray<double>{5.});
  CHECK(e.get_value() == xt::xarray<double>{5.});
  e.zero(fusor::borrow);
  CHECK(e.get_value()(0) == 0.);
  // An empty borrowed value has no buffer at all (a null data pointer): zeroing
  // it in place writes nothing and reads nothing.
  xt::xarray<double> none(xt::xarray<double>::shape_type{0});
  auto b = fusor::shared(none, fusor::borrow);
  b.zero(fusor::borrow);
  b.zero();
  CHECK(b.shape() == fusor::dims{0});
}

TEST_CASE("handles share one variable (PyTensor clone, R12)") {
  auto a = fusor::shared(xt::xarray<int>{1});
  auto b = a;
  CHECK(a.is(b));
  b.set_value(xt::xarray<int>{2});
  CHECK(a.get_value()(0) == 2);
  auto c = fusor::shared(xt::xarray<int>{1});
  CHECK_FALSE(a.is(c));
  CHECK(a.id() != c.id());
}

TEST_CASE("take_value() after adopting a value of another registered type copies, correctly") {
  auto s = fusor::shared(xt::xtensor<float, 1>{0.f}, "s");
  s.set_value(xt::xarray<float>{1.f, 2.f, 3.f}, fusor::borrow);  // an rvalue of another type: adopted
  xt::xtensor<float, 1> out = s.take_value();
  CHECK(out == xt::xtensor<float, 1>{1.f, 2.f, 3.f});
  CHECK_FALSE(s.has_value());
}
