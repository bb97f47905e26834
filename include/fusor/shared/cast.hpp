// fusor/shared/cast.hpp — the casting rules a value passes to be stored in a
// variable of another dtype (docs/memory-model.md, R28–R29).
#pragma once

#include <cmath>
#include <limits>
#include <charconv>
#include <string>
#include <type_traits>

#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"

namespace fusor {

/// Converts one element as numpy's astype does, without C++'s undefined
/// behaviour: integers wrap modulo 2^n (C++20), floats are truncated toward
/// zero; a float within the target's range converts exactly, one outside it
/// becomes the result of going through int64 (what x86-64 NumPy gives), and
/// NaN or a value outside int64 becomes 0. (C++ leaves a float-to-integer
/// conversion out of range undefined; these are all defined.)
template <element Dst, element Src>
FUSOR_HD constexpr Dst convert_element(Src v) noexcept {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    if (!(v == v)) return Dst(0);
    // 2^63 and 2^64 are exact in every float type; compare against them.
    constexpr Src two63 = Src(9223372036854775808.0), two64 = Src(18446744073709551616.0);
    if constexpr (std::is_unsigned_v<Dst> && sizeof(Dst) == 8) {
      if (v >= two63 && v < two64) return static_cast<Dst>(v);  // only uint64 reaches past int64
    }
    if (v >= -two63 && v < two63) return static_cast<Dst>(static_cast<std::int64_t>(v));
    return Dst(0);
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
[[noreturn]] inline void refuse_cast(const who_ref& who, dtype to, dtype from, bool strict, const std::string& value,
                                     const std::string& converted) {
  if (strict)
    throw dtype_error(who() + " is strict: expected a value of dtype " + std::string(name(to)) + ", received " +
                      std::string(name(from)));
  if (!value.empty())
    throw dtype_error(who() + " (dtype " + std::string(name(to)) + ") cannot store accurately the value " + value +
                      ": it would be represented as " + converted + ". Convert the value explicitly, or create the "
                      "variable with allow_downcast = true");
  throw dtype_error(who() + " (dtype " + std::string(name(to)) + ") cannot store a value of dtype " +
                    std::string(name(from)) + " without risking loss of precision. Convert it explicitly (e.g. "
                    "xt::cast<" + std::string(cpp_name(to)) + ">), or create the variable with allow_downcast = true");
}
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
