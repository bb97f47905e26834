// dtype names, sizes, NumPy promotion (checked against numpy.promote_types
// results written out by hand from NumPy's documented table) and the safe-cast
// rule of R28.6a.
#include <doctest/doctest.h>

#include <fusor/core/dtype.hpp>

using fusor::dtype;

TEST_CASE("dtype_of maps C++ element types to NumPy dtypes") {
  CHECK(fusor::dtype_of<bool> == dtype::bool_);
  CHECK(fusor::dtype_of<std::int8_t> == dtype::int8);
  CHECK(fusor::dtype_of<std::uint16_t> == dtype::uint16);
  CHECK(fusor::dtype_of<std::int64_t> == dtype::int64);
  CHECK(fusor::dtype_of<long long> == dtype::int64);
  CHECK(fusor::dtype_of<unsigned long long> == dtype::uint64);
  CHECK(fusor::dtype_of<float> == dtype::float32);
  CHECK(fusor::dtype_of<double> == dtype::float64);
  CHECK(fusor::name(dtype::float32) == "float32");
  CHECK(fusor::name(dtype::bool_) == "bool");
  CHECK(fusor::size_of(dtype::uint32) == 4);
  CHECK(fusor::size_of(dtype::bool_) == 1);
}

TEST_CASE("promote follows numpy.promote_types") {
  // Each row: a, b, numpy.promote_types(a, b).
  struct row {
    dtype a, b, expected;
  };
  const row rows[] = {
      {dtype::bool_, dtype::int8, dtype::int8},        {dtype::bool_, dtype::float32, dtype::float32},
      {dtype::int8, dtype::uint8, dtype::int16},       {dtype::int16, dtype::uint8, dtype::int16},
      {dtype::int32, dtype::uint32, dtype::int64},     {dtype::int64, dtype::uint64, dtype::float64},
      {dtype::uint8, dtype::uint32, dtype::uint32},    {dtype::int8, dtype::int64, dtype::int64},
      {dtype::int16, dtype::float32, dtype::float32},  {dtype::uint16, dtype::float32, dtype::float32},
      {dtype::int32, dtype::float32, dtype::float64},  {dtype::uint64, dtype::float32, dtype::float64},
      {dtype::float32, dtype::float64, dtype::float64}, {dtype::int64, dtype::float64, dtype::float64},
      {dtype::uint8, dtype::int64, dtype::int64},      {dtype::uint32, dtype::int32, dtype::int64},
  };
  for (const auto& r : rows) {
    CAPTURE(fusor::name(r.a));
    CAPTURE(fusor::name(r.b));
    CHECK(fusor::promote(r.a, r.b) == r.expected);
    CHECK(fusor::promote(r.b, r.a) == r.expected);
  }
  static_assert(std::is_same_v<fusor::promote_t<float, std::int32_t>, double>);
  static_assert(std::is_same_v<fusor::promote_t<std::uint8_t, std::int8_t>, std::int16_t>);
}

TEST_CASE("safe casts are the lossless upcasts (R28.6a)") {
  CHECK(fusor::can_cast_safely(dtype::int32, dtype::float64));
  CHECK(fusor::can_cast_safely(dtype::int64, dtype::float64));  // NumPy accepts it: no value check
  CHECK(fusor::can_cast_safely(dtype::float32, dtype::float64));
  CHECK(fusor::can_cast_safely(dtype::bool_, dtype::uint8));
  CHECK_FALSE(fusor::can_cast_safely(dtype::float64, dtype::float32));
  CHECK_FALSE(fusor::can_cast_safely(dtype::int16, dtype::int8));
  CHECK_FALSE(fusor::can_cast_safely(dtype::uint8, dtype::int8));
  CHECK_FALSE(fusor::can_cast_safely(dtype::int32, dtype::float32));
  CHECK_FALSE(fusor::can_cast_safely(dtype::float32, dtype::int64));
}

TEST_CASE("weak C++ scalars keep the array's dtype unless their kind is higher (NEP 50)") {
  CHECK(fusor::promote_weak(dtype::float32, dtype::float64) == dtype::float32);
  CHECK(fusor::promote_weak(dtype::float32, dtype::int32) == dtype::float32);
  CHECK(fusor::promote_weak(dtype::int8, dtype::int64) == dtype::int8);
  CHECK(fusor::promote_weak(dtype::int32, dtype::float64) == dtype::float64);
  CHECK(fusor::promote_weak(dtype::bool_, dtype::int32) == dtype::int64);
  CHECK(fusor::promote_weak(dtype::uint8, dtype::bool_) == dtype::uint8);
}
