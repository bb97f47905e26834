// fusor/shared/cast.hpp — the casting rules a value passes to be stored in a
// variable of another dtype (docs/memory-model.md, R28–R29).
#pragma once

#include <cmath>
#include <limits>
#include <charconv>
#include <cstdint>
#include <string>
#include <type_traits>

#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"

namespace fusor {

namespace detail {

// x86-64's truncating conversions, which NumPy's casting loops compile to
// (cvttsd2si and cvttss2si): in range, truncation toward zero; NaN, an
// infinity or a value out of range gives the "integer indefinite" value, the
// minimum of the instruction's width. Compared in double: exact for float too.
FUSOR_HD constexpr std::int32_t truncate_to_int32(double v) noexcept {
  if (v > -2147483649.0 && v < 2147483648.0) return static_cast<std::int32_t>(v);
  return std::int32_t(-2147483647 - 1);
}
FUSOR_HD constexpr std::int64_t truncate_to_int64(double v) noexcept {
  if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return static_cast<std::int64_t>(v);
  return std::int64_t(-9223372036854775807LL - 1);
}

}  // namespace detail

/// Converts one element as numpy's astype does on x86-64, without C++'s
/// undefined behaviour: integers wrap modulo 2^n (C++20); a float is
/// converted as the C cast in NumPy's loop compiles there. Targets of 8 and 16
/// bits and int32 go through a 32-bit conversion, uint32 and int64 through a
/// 64-bit one, then wrap to their width; NaN, infinities and values out of that
/// conversion's range give its minimum (int32: -2^31; int8: 0, the low bits of
/// -2^31). uint64 is converted as compilers do: below 2^63 through int64 (NaN
/// and -inf give 2^63), above it with 2^63 subtracted first (inf and values
/// from 2^64 give 0). NumPy's own results for uint32 depend on the array's
/// layout (its vectorised loop differs); fusor gives its strided loop's.
template <element Dst, element Src>
FUSOR_HD constexpr Dst convert_element(Src v) noexcept {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    const double d = static_cast<double>(v);
    if constexpr (sizeof(Dst) < 4 || (sizeof(Dst) == 4 && std::is_signed_v<Dst>)) {
      return static_cast<Dst>(detail::truncate_to_int32(d));
    } else if constexpr (sizeof(Dst) == 4 || std::is_signed_v<Dst>) {
      return static_cast<Dst>(detail::truncate_to_int64(d));
    } else {
      constexpr double two63 = 9223372036854775808.0;
      if (!(d >= two63)) return static_cast<Dst>(detail::truncate_to_int64(d));
      return static_cast<Dst>(detail::truncate_to_int64(d - two63)) ^ (Dst(1) << 63);
    }
  } else {
    return static_cast<Dst>(v);
  }
}

/// How a variable treats a value of another dtype.
struct cast_policy {
  bool strict = false;
  bool allow_downcast = false;
};

namespace detail {
/// Shortest text that reads back as the same value (8.23, not 8.2300000000000004).
template <class T>
std::string value_text(T v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, +v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}
}  // namespace detail

namespace detail {

/// The refusals of check_cast. `value` and `converted`: the texts of a
/// scalar source and of what it would become, when the value was the reason.
[[noreturn]] FUSOR_RUNTIME void refuse_cast(const who_ref& who, dtype to, dtype from, bool strict,
                                            const std::string& value, const std::string& converted);
}  // namespace detail

/// Checks that `n` elements of type Src may be stored as Dst under `policy`,
/// throwing fusor::dtype_error naming `who` otherwise. A `scalar_source` (a
/// C++ arithmetic value, Theano's Python scalar) may also be stored when the
/// conversion is exact for its value (R28.6c: 8.0 -> int64 is fine, 8.23 is not).
/// `who` is a string or a callable returning one, called only on a refusal.
template <element Dst, element Src, class Who>
void check_cast(const Who& who, const Src* src, std::size_t n, bool scalar_source, cast_policy policy) {
  constexpr dtype to = dtype_of<Dst>, from = dtype_of<Src>;
  if constexpr (to != from) {
    if (!policy.strict && (policy.allow_downcast || can_cast_safely(from, to))) return;
    if (!policy.strict && scalar_source && n == 1) {
      // Exact when the value survives the round trip. Both directions go
      // through convert_element: a raw cast back would be undefined for a value
      // the target rounded out of the source's range (INT_MAX -> 2^31f -> int).
      const Dst converted = convert_element<Dst>(src[0]);
      if (convert_element<Src>(converted) == src[0]) return;
      if constexpr (std::is_floating_point_v<Src> && std::is_floating_point_v<Dst>)
        if (src[0] != src[0]) return;  // NaN is NaN in every float type
      detail::refuse_cast(detail::who_ref(who), to, from, false, detail::value_text(src[0]),
                          detail::value_text(converted));
    }
    detail::refuse_cast(detail::who_ref(who), to, from, policy.strict, {}, {});
  }
}

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/shared/impl/cast.ipp"
#endif
