// fusor/expr/functors.hpp — the elementwise operations, as plain structs with
// templated FUSOR_HD call operators. One definition serves the scalar loop, the
// xsimd batch loop (math functions are found by argument-dependent lookup in
// xsimd for batches, in std for scalars) and a CUDA kernel.
//
// Portable: no xsimd, no CUDA headers here.
#pragma once

#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "fusor/core/config.hpp"
#include "fusor/core/wrapping.hpp"

namespace fusor::fn {

/// Scalar select; backend/cpu/simd.hpp adds the batch overload through xsimd.
template <class T>
FUSOR_INLINE T select(bool c, T a, T b) {
  return c ? a : b;
}

// Math functions for scalars. Unqualified calls inside the functors find these
// for arithmetic types and xsimd's for batches (argument-dependent lookup).
using std::abs;
using std::cos;
using std::exp;
using std::expm1;
using std::log;
using std::log1p;
using std::pow;
using std::sin;
using std::sqrt;
using std::tan;
using std::tanh;

/// Whether x is NaN, for scalars (false for integers, which have none).
/// Batches use xsimd::isnan, found by argument-dependent lookup: xsimd's `!=`
/// is an ordered comparison on AVX (NaN != NaN is false there) but not on
/// SSE2, so `x != x` would give different answers on different machines.
template <class T>
  requires std::is_arithmetic_v<T>
FUSOR_INLINE bool isnan(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

// exp, expm1 and tanh through xsimd, defined for every argument. xsimd's
// double exp — which expm1 resembles and tanh calls — converts round(x / log
// 2) to a 64-bit integer, and where the instruction set has no such
// conversion (SSE2, AVX2; AVX-512DQ has one) it does so with a C++ cast,
// undefined for ±inf and NaN (UBSan stops there; the hardware's answer
// happens to give the right result). So a double batch is clamped first to
// where the function has saturated (exp(-1000) is 0, exp(1000) inf,
// expm1(-1000) -1, tanh(40) 1), a NaN lane computed on 0 and given back as
// the NaN it was. Scalars call the C library, which takes every argument.
template <class B>
inline constexpr bool saturate_batches =
#if defined(__AVX512DQ__)
    false;
#else
    std::is_same_v<typename B::value_type, double>;
#endif

template <class B, class F>
inline B saturating(const B& x, double bound, F f) {
  if constexpr (!saturate_batches<B>) {
    return f(x);
  } else {
    const B lo(-bound), hi(bound);
    const auto number = x == x;  // an ordered comparison: false for NaN only
    B c = select(x < lo, lo, x);
    c = select(hi < c, hi, c);
    return select(number, f(select(number, c, B(0))), x);
  }
}

// A math function for scalars (the C library's FN, host and device) and for
// batches (BATCH, an expression of the batch x of type B).
#define FUSOR_MATH_FUNCTION(NAME, FN, BATCH)                                        \
  template <class T>                                                               \
    requires std::is_arithmetic_v<T>                                               \
  FUSOR_INLINE T NAME(const T& x) {                                                \
    return FN(x);                                                                  \
  }                                                                                \
  template <class B>                                                               \
    requires(!std::is_arithmetic_v<B>)                                             \
  inline B NAME(const B& x) {                                                      \
    return BATCH;                                                                  \
  }
#define FUSOR_SATURATING(FN, BOUND) saturating(x, BOUND, [](const B& v) { return FN(v); })
FUSOR_MATH_FUNCTION(tanh_of, tanh, FUSOR_SATURATING(tanh, 40))

// The top of exp's range. xsimd's exp scales by 2^round(x / log 2), and that
// power overflows from x = 127.5 log 2 (float, 88.376) and 1023.5 log 2
// (double, 709.437), where exp(x) is still finite up to log of the largest
// number (88.723 and 709.783): exp(88.46f) was inf where it is 2.62e38 (found
// by the differential tests; the C library and NumPy compute it). Above a
// point a little below that, exp(x) is computed as exp(x / 2) squared (x / 2
// is exact; the square has about twice exp's rounding error, a few ulps), and
// expm1(x) is the same number (exp(x) > 2^127: the 1 is below its last bit).
template <class B>
inline B exp_top(const B& x, const B& below) {
  using T = typename B::value_type;
  const B top(std::is_same_v<T, float> ? T(88.37f) : T(709.43));
  const auto large = top < x;  // false for NaN
  if (!any(large)) return below;  // xsimd::any, by argument-dependent lookup
  const B half = saturating(select(large, x * B(T(0.5)), B(T(0))), 1000, [](const B& v) { return exp(v); });
  return select(large, half * half, below);
}
// exp_of and expm1_of: saturating as above, and exp_top over the top of the range.
FUSOR_MATH_FUNCTION(exp_of, exp, exp_top(x, FUSOR_SATURATING(exp, 1000)))
FUSOR_MATH_FUNCTION(expm1_of, expm1, exp_top(x, FUSOR_SATURATING(expm1, 1000)))
#undef FUSOR_SATURATING
#undef FUSOR_MATH_FUNCTION

// A call operator written once, declared for scalars (host and device) and
// for batches (host): see FUSOR_SCALAR_HD in core/config.hpp.
#define FUSOR_CALL(RET, PARAMS, BODY)                  \
  FUSOR_SCALAR_HD(A) RET operator() PARAMS const BODY  \
  FUSOR_BATCH_HOST(A) RET operator() PARAMS const BODY

#define FUSOR_BINARY_FUNCTOR(NAME, SYMBOL, EXPR)                  \
  struct NAME {                                                    \
    static constexpr const char* symbol = SYMBOL;                  \
    static constexpr bool infix = true;                            \
    FUSOR_CALL(auto, (const A& a, const A& b), { return EXPR; })   \
  };

// Integers wrap modulo 2^n, as NumPy's do (core/wrapping.hpp); bool keeps
// C++'s operators (+ is a logical or, * a logical and, as in NumPy).
#define FUSOR_WRAPPING_FUNCTOR(NAME, SYMBOL, OP, WRAPPED)          \
  struct NAME {                                                    \
    static constexpr const char* symbol = SYMBOL;                  \
    static constexpr bool infix = true;                            \
    FUSOR_CALL(auto, (const A& a, const A& b), {                   \
      if constexpr (wrapping::wraps<A>) return WRAPPED(a, b);      \
      else return a OP b;                                          \
    })                                                             \
  };
FUSOR_WRAPPING_FUNCTOR(plus, "+", +, wrapping::add)
FUSOR_WRAPPING_FUNCTOR(minus, "-", -, wrapping::sub)
FUSOR_WRAPPING_FUNCTOR(multiplies, "*", *, wrapping::mul)
#undef FUSOR_WRAPPING_FUNCTOR

FUSOR_BINARY_FUNCTOR(divides, "/", a / b)
FUSOR_BINARY_FUNCTOR(equal, "==", a == b)
FUSOR_BINARY_FUNCTOR(not_equal, "!=", a != b)
FUSOR_BINARY_FUNCTOR(less, "<", a < b)
FUSOR_BINARY_FUNCTOR(less_equal, "<=", a <= b)
FUSOR_BINARY_FUNCTOR(greater, ">", a > b)
FUSOR_BINARY_FUNCTOR(greater_equal, ">=", a >= b)
FUSOR_BINARY_FUNCTOR(logical_and, "&&", a && b)
FUSOR_BINARY_FUNCTOR(logical_or, "||", a || b)
#undef FUSOR_BINARY_FUNCTOR

/// NumPy's `%` on integers: the result takes the divisor's sign (floor
/// modulo), and x % 0 is 0 (NumPy warns; C++ would be undefined).
struct modulus {
  static constexpr const char* symbol = "%";
  static constexpr bool infix = true;
  template <class A>
  FUSOR_INLINE A operator()(A a, A b) const {
    if (b == A(0)) return A(0);
    if constexpr (std::is_signed_v<A>) {
      if (b == A(-1)) return A(0);  // avoids INT_MIN % -1 overflow
      A r = static_cast<A>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<A>(r + b);
      return r;
    } else {
      return static_cast<A>(a % b);
    }
  }
};

#define FUSOR_NAMED_BINARY(NAME, BODY)                  \
  struct NAME {                                         \
    static constexpr const char* symbol = #NAME;        \
    static constexpr bool infix = false;                \
    FUSOR_CALL(auto, (const A& a, const A& b), BODY)    \
  };

// NaN propagates from either side (NumPy's maximum / minimum), whatever the
// instruction set: a NaN `b` is chosen explicitly, a NaN `a` because no
// comparison with it holds.
FUSOR_NAMED_BINARY(maximum, { return select((a < b) | isnan(b), b, a); })
FUSOR_NAMED_BINARY(minimum, { return select((b < a) | isnan(b), b, a); })
// NaN is ignored unless both are NaN (NumPy's fmax / fmin).
FUSOR_NAMED_BINARY(fmax, { return select((a < b) | isnan(a), b, a); })
FUSOR_NAMED_BINARY(fmin, { return select((b < a) | isnan(a), b, a); })
#undef FUSOR_NAMED_BINARY

/// pow(a, b). Integers: exact exponentiation modulo 2^n (a negative exponent
/// is refused before the kernel runs, as NumPy refuses it); floats: C's pow
/// (powf for float), special cases included (pow(x, 0) = 1 for every x, NaN
/// too; pow(1, y) = 1; pow(-0, -1) = -inf; ...): NumPy's np.power, bit for bit.
///
/// Batches call the scalar function lane by lane. xsimd's batch pow is
/// exp(b * log|a|): faster, but not C's answer — pow(2, 3) is not exactly 8
/// there, and pow(0, 0) is 0, pow(nan, 0) and pow(1, inf) are NaN — and
/// fusor's semantics are NumPy's on every instruction set.
struct power {
  static constexpr const char* symbol = "pow";
  static constexpr bool infix = false;
  FUSOR_SCALAR_HD(A) auto operator()(const A& a, const A& b) const {
    if constexpr (wrapping::wraps<A>) return wrapping::pow(a, b);
    else return pow(a, b);
  }
  FUSOR_BATCH_HOST(A) auto operator()(const A& a, const A& b) const {
    using T = typename A::value_type;
    if constexpr (!std::is_floating_point_v<T>) {
      return pow(a, b);
    } else {
      alignas(A::arch_type::alignment()) T x[A::size];
      alignas(A::arch_type::alignment()) T y[A::size];
      a.store_aligned(x);
      b.store_aligned(y);
      for (std::size_t k = 0; k < A::size; ++k) x[k] = std::pow(x[k], y[k]);
      return A::load_aligned(x);
    }
  }
};

// Functor names carry an _op suffix where the plain name is the math function
// they call: an unqualified call must find the function (and, for batches,
// xsimd's through argument-dependent lookup), never the struct.
#define FUSOR_UNARY_FUNCTOR(NAME, SYMBOL, BODY)        \
  struct NAME {                                        \
    static constexpr const char* symbol = SYMBOL;      \
    FUSOR_CALL(auto, (const A& x), BODY)               \
  };

FUSOR_UNARY_FUNCTOR(negate, "-", {
  if constexpr (wrapping::wraps<A>) return wrapping::neg(x);
  else return -x;
})
FUSOR_UNARY_FUNCTOR(logical_not, "!", { return !x; })
FUSOR_UNARY_FUNCTOR(sqrt_op, "sqrt", { return sqrt(x); })
FUSOR_UNARY_FUNCTOR(exp_op, "exp", { return exp_of(x); })
FUSOR_UNARY_FUNCTOR(expm1_op, "expm1", { return expm1_of(x); })
FUSOR_UNARY_FUNCTOR(log_op, "log", { return log(x); })
FUSOR_UNARY_FUNCTOR(log1p_op, "log1p", { return log1p(x); })
FUSOR_UNARY_FUNCTOR(sin_op, "sin", { return sin(x); })
FUSOR_UNARY_FUNCTOR(cos_op, "cos", { return cos(x); })
FUSOR_UNARY_FUNCTOR(tan_op, "tan", { return tan(x); })
FUSOR_UNARY_FUNCTOR(tanh_op, "tanh", { return tanh_of(x); })
// x itself; fusor::grad sends no gradient through it (Theano's zero_grad).
FUSOR_UNARY_FUNCTOR(stop_gradient, "stop_gradient", { return x; })
// The shift of a stable softmax: its operand (a maximum) where it is finite,
// else 0, and no gradient (as stop_gradient). x - x is 0 for a finite x and
// NaN for an infinite or NaN one. One node, where `where(abs(m) < inf, m, 0)`
// held the maximum's whole tree twice, and a gradient's type repeats it.
FUSOR_UNARY_FUNCTOR(finite_shift, "finite_shift", { return select((x - x) == A(0), x, A(0)); })
// x itself, as written: fusor's stable rewrites (rewrite/stable.hpp) do not
// look inside it; its gradient is the identity's.
FUSOR_UNARY_FUNCTOR(as_written, "as_written", { return x; })
#undef FUSOR_UNARY_FUNCTOR

struct absolute {
  static constexpr const char* symbol = "abs";
  FUSOR_CALL(A, (const A& x), {
    if constexpr (std::is_integral_v<A>) return wrapping::abs(x);
    else return abs(x);
  })
};

/// 1 / (1 + exp(-x)).
struct sigmoid {
  static constexpr const char* symbol = "sigmoid";
  FUSOR_CALL(A, (const A& x), { return A(1) / (A(1) + exp_of(-x)); })
};

/// log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) so that large |x|
/// neither overflows nor loses precision.
struct softplus {
  static constexpr const char* symbol = "softplus";
  FUSOR_CALL(A, (const A& x), {
    const A ax = abs(x);
    return maximum{}(x, A(0)) + log1p(exp_of(-ax));
  })
};

/// where(c, a, b).
struct where {
  static constexpr const char* symbol = "where";
  template <class C, class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
  FUSOR_INLINE A operator()(const C& c, const A& a, const A& b) const {
    return select(c, a, b);
  }
  template <class C, class A, std::enable_if_t<!std::is_arithmetic_v<A>, int> = 0>
  inline A operator()(const C& c, const A& a, const A& b) const {
    return select(c, a, b);
  }
};

/// clip(x, lo, hi) = minimum(maximum(x, lo), hi), as NumPy.
struct clip {
  static constexpr const char* symbol = "clip";
  FUSOR_CALL(A, (const A& x, const A& lo, const A& hi), { return minimum{}(maximum{}(x, lo), hi); })
};

}  // namespace fusor::fn
