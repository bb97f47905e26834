// fusor/core/wrapping.hpp — integer arithmetic that wraps modulo 2^n, NumPy's
// integer semantics, without C++'s undefined behaviour.
//
// C++ leaves signed overflow undefined, and promotes uint16 * uint16 to int,
// where 65535 * 65535 overflows. NumPy's integers wrap (two's complement).
// These helpers compute in the unsigned type of at least int's width, where
// C++ defines wrap-around, and convert back, which C++20 defines as modulo
// 2^n. Compilers emit the same add and multiply instructions as for the plain
// operators, so loops keep their speed (and their vectorisation).
//
// Portable: used by the functors, the reductions and the BLAS fallback, on the
// host and in CUDA kernels.
#pragma once

#include <type_traits>

#include "fusor/core/config.hpp"

namespace fusor::wrapping {

/// Integer types that wrap (bool is not one: its + is a logical or).
template <class T>
inline constexpr bool wraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The unsigned type the arithmetic of T is done in: unsigned int for types
/// narrower than int (which C++ would promote to signed int), T's own unsigned
/// counterpart otherwise.
template <class T>
using work_t = std::make_unsigned_t<decltype(+T{})>;

template <class T>
FUSOR_INLINE constexpr T add(T a, T b) noexcept {
  return static_cast<T>(static_cast<work_t<T>>(static_cast<work_t<T>>(a) + static_cast<work_t<T>>(b)));
}
template <class T>
FUSOR_INLINE constexpr T sub(T a, T b) noexcept {
  return static_cast<T>(static_cast<work_t<T>>(static_cast<work_t<T>>(a) - static_cast<work_t<T>>(b)));
}
template <class T>
FUSOR_INLINE constexpr T mul(T a, T b) noexcept {
  return static_cast<T>(static_cast<work_t<T>>(static_cast<work_t<T>>(a) * static_cast<work_t<T>>(b)));
}
/// -x; the minimum of a signed type is its own negation, as in NumPy.
template <class T>
FUSOR_INLINE constexpr T neg(T x) noexcept {
  return static_cast<T>(static_cast<work_t<T>>(work_t<T>(0) - static_cast<work_t<T>>(x)));
}
/// |x|; abs of a signed minimum is the minimum, as in NumPy.
template <class T>
FUSOR_INLINE constexpr T abs(T x) noexcept {
  if constexpr (std::is_signed_v<T>) return x < T(0) ? neg(x) : x;
  else return x;
}

/// base^exponent by repeated squaring, exact modulo 2^n (NumPy's integer
/// power). NumPy refuses negative exponents; fusor checks them before a kernel
/// runs (an error, see the pow lowering), so this only makes the function
/// total: 1^e = 1, (-1)^e = +-1, anything else 0.
template <class T>
FUSOR_INLINE constexpr T pow(T base, T exponent) noexcept {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < T(0)) {
      if (base == T(1)) return T(1);
      if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  using W = work_t<T>;
  W result = 1, b = static_cast<W>(base);
  for (auto e = static_cast<std::make_unsigned_t<T>>(exponent); e != 0; e >>= 1) {
    if (e & 1u) result = static_cast<W>(result * b);
    b = static_cast<W>(b * b);
  }
  return static_cast<T>(result);
}

}  // namespace fusor::wrapping
