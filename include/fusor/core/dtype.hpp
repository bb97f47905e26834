// fusor/core/dtype.hpp — element types, their NumPy names, and NumPy's
// promotion and safe-casting rules, usable at compile time and at run time.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace fusor {

/// The element types fusor stores. The order is NumPy's type-number order,
/// which the promotion table below relies on only through `kind` and `size`.
enum class dtype : std::uint8_t {
  bool_,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
};

namespace detail {
/// Whether T is an element type: a plain constant, so that `element<T>` is one
/// atomic constraint. (Written as a disjunction of `std::same_as` constraints,
/// it was occasionally judged unsatisfied for `float` or `std::int16_t` by GCC
/// 12, in about one build of a few dozen; a plain trait is evaluated by
/// ordinary template instantiation.)
template <class T>
inline constexpr bool is_element_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    // `long long` and `long` are distinct types on LP64 even when both are 64
    // bits; accept whichever int64_t is not.
    ((std::is_same_v<T, long> || std::is_same_v<T, long long> || std::is_same_v<T, unsigned long> ||
      std::is_same_v<T, unsigned long long>) &&
     sizeof(T) == 8);
}  // namespace detail

/// A C++ type fusor accepts as an element type.
template <class T>
concept element = detail::is_element_v<T>;

namespace detail {
template <class T>
constexpr dtype dtype_of_impl() {
  if constexpr (std::same_as<T, bool>) return dtype::bool_;
  else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? dtype::float32 : dtype::float64;
  else if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1) return dtype::int8;
    else if constexpr (sizeof(T) == 2) return dtype::int16;
    else if constexpr (sizeof(T) == 4) return dtype::int32;
    else return dtype::int64;
  } else {
    if constexpr (sizeof(T) == 1) return dtype::uint8;
    else if constexpr (sizeof(T) == 2) return dtype::uint16;
    else if constexpr (sizeof(T) == 4) return dtype::uint32;
    else return dtype::uint64;
  }
}
}  // namespace detail

/// The dtype of a C++ element type.
template <element T>
inline constexpr dtype dtype_of = detail::dtype_of_impl<std::remove_cv_t<T>>();

/// The C++ type of a dtype.
template <dtype D> struct element_of;
template <> struct element_of<dtype::bool_> { using type = bool; };
template <> struct element_of<dtype::int8> { using type = std::int8_t; };
template <> struct element_of<dtype::uint8> { using type = std::uint8_t; };
template <> struct element_of<dtype::int16> { using type = std::int16_t; };
template <> struct element_of<dtype::uint16> { using type = std::uint16_t; };
template <> struct element_of<dtype::int32> { using type = std::int32_t; };
template <> struct element_of<dtype::uint32> { using type = std::uint32_t; };
template <> struct element_of<dtype::int64> { using type = std::int64_t; };
template <> struct element_of<dtype::uint64> { using type = std::uint64_t; };
template <> struct element_of<dtype::float32> { using type = float; };
template <> struct element_of<dtype::float64> { using type = double; };
template <dtype D>
using element_of_t = typename element_of<D>::type;

/// NumPy's name of a dtype ("float32", "bool", ...), used in every message.
constexpr std::string_view name(dtype d) noexcept {
  switch (d) {
    case dtype::bool_: return "bool";
    case dtype::int8: return "int8";
    case dtype::uint8: return "uint8";
    case dtype::int16: return "int16";
    case dtype::uint16: return "uint16";
    case dtype::int32: return "int32";
    case dtype::uint32: return "uint32";
    case dtype::int64: return "int64";
    case dtype::uint64: return "uint64";
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
  }
  return "?";
}

/// The C++ spelling of a dtype's element type, for messages that suggest code.
constexpr std::string_view cpp_name(dtype d) noexcept {
  switch (d) {
    case dtype::bool_: return "bool";
    case dtype::int8: return "std::int8_t";
    case dtype::uint8: return "std::uint8_t";
    case dtype::int16: return "std::int16_t";
    case dtype::uint16: return "std::uint16_t";
    case dtype::int32: return "std::int32_t";
    case dtype::uint32: return "std::uint32_t";
    case dtype::int64: return "std::int64_t";
    case dtype::uint64: return "std::uint64_t";
    case dtype::float32: return "float";
    case dtype::float64: return "double";
  }
  return "?";
}

/// Size of one element in bytes.
constexpr std::size_t size_of(dtype d) noexcept {
  switch (d) {
    case dtype::bool_:
    case dtype::int8:
    case dtype::uint8: return 1;
    case dtype::int16:
    case dtype::uint16: return 2;
    case dtype::int32:
    case dtype::uint32:
    case dtype::float32: return 4;
    default: return 8;
  }
}

/// NumPy's kinds, in the order of NEP 50's "weak scalar" rule.
enum class dtype_kind : std::uint8_t { boolean, unsigned_int, signed_int, floating };

constexpr dtype_kind kind_of(dtype d) noexcept {
  switch (d) {
    case dtype::bool_: return dtype_kind::boolean;
    case dtype::uint8:
    case dtype::uint16:
    case dtype::uint32:
    case dtype::uint64: return dtype_kind::unsigned_int;
    case dtype::float32:
    case dtype::float64: return dtype_kind::floating;
    default: return dtype_kind::signed_int;
  }
}

constexpr bool is_integer(dtype d) noexcept {
  return kind_of(d) == dtype_kind::signed_int || kind_of(d) == dtype_kind::unsigned_int;
}
constexpr bool is_floating(dtype d) noexcept { return kind_of(d) == dtype_kind::floating; }

namespace detail {
constexpr dtype signed_of_size(std::size_t n) noexcept {
  return n == 1 ? dtype::int8 : n == 2 ? dtype::int16 : n == 4 ? dtype::int32 : dtype::int64;
}
constexpr dtype unsigned_of_size(std::size_t n) noexcept {
  return n == 1 ? dtype::uint8 : n == 2 ? dtype::uint16 : n == 4 ? dtype::uint32 : dtype::uint64;
}
}  // namespace detail

/// numpy.promote_types(a, b): the smallest dtype both convert to safely.
constexpr dtype promote(dtype a, dtype b) noexcept {
  if (a == b) return a;
  const auto ka = kind_of(a), kb = kind_of(b);
  if (ka == dtype_kind::boolean) return b;
  if (kb == dtype_kind::boolean) return a;
  const std::size_t sa = size_of(a), sb = size_of(b);
  if (ka == dtype_kind::floating || kb == dtype_kind::floating) {
    if (ka == dtype_kind::floating && kb == dtype_kind::floating) return sa >= sb ? a : b;
    // Integers of up to 16 bits fit float32 exactly; wider ones need float64.
    const dtype f = ka == dtype_kind::floating ? a : b;
    const std::size_t int_size = ka == dtype_kind::floating ? sb : sa;
    if (f == dtype::float64) return dtype::float64;
    return int_size <= 2 ? dtype::float32 : dtype::float64;
  }
  if (ka == kb) return sa >= sb ? a : b;
  // One signed, one unsigned.
  const std::size_t ss = ka == dtype_kind::signed_int ? sa : sb;
  const std::size_t us = ka == dtype_kind::unsigned_int ? sa : sb;
  if (ss > us) return detail::signed_of_size(ss);
  if (us < 8) return detail::signed_of_size(us * 2);
  return dtype::float64;  // int64 with uint64, as in NumPy
}

/// numpy.can_cast(from, to, "safe"): converting loses nothing for any value.
/// This is Theano's `upcast(target, data.dtype) == target` (R28.6a).
constexpr bool can_cast_safely(dtype from, dtype to) noexcept { return promote(from, to) == to; }

/// NEP 50: a C++ arithmetic constant in an expression is a "weak" scalar. It
/// takes the array's dtype when its kind is not higher (2 * float32 -> float32,
/// 0.5 * float32 -> float32); otherwise the default dtype of its kind
/// (0.5 * int32 -> float64, as NumPy does with a Python float).
constexpr dtype promote_weak(dtype array, dtype scalar) noexcept {
  auto rank_of = [](dtype_kind k) {
    return k == dtype_kind::boolean ? 0 : k == dtype_kind::floating ? 2 : 1;
  };
  if (rank_of(kind_of(scalar)) <= rank_of(kind_of(array))) return array;
  return kind_of(scalar) == dtype_kind::floating ? dtype::float64 : dtype::int64;
}

/// Calls f(T{}) with the C++ element type of a run-time dtype.
template <class F>
decltype(auto) visit(dtype d, F&& f) {
  switch (d) {
    case dtype::bool_: return f(bool{});
    case dtype::int8: return f(std::int8_t{});
    case dtype::uint8: return f(std::uint8_t{});
    case dtype::int16: return f(std::int16_t{});
    case dtype::uint16: return f(std::uint16_t{});
    case dtype::int32: return f(std::int32_t{});
    case dtype::uint32: return f(std::uint32_t{});
    case dtype::int64: return f(std::int64_t{});
    case dtype::uint64: return f(std::uint64_t{});
    case dtype::float32: return f(float{});
    case dtype::float64: break;
  }
  return f(double{});
}

/// promote() on C++ types.
template <element A, element B>
using promote_t = element_of_t<promote(dtype_of<A>, dtype_of<B>)>;

}  // namespace fusor
