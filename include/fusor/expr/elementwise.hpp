// fusor/expr/elementwise.hpp — elementwise nodes, their result dtypes (NumPy's
// promotion, NEP 50 weak constants), and the operators and functions that
// build them.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/functors.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

/// An elementwise node: applies F to its arguments after converting argument i
/// to the i-th conversion of its signature S (map_signature, below); the result
/// has the signature's element type. Arguments are held by value.
template <class F, class S, class... Args>
class map_node;

template <class C>
class gate_node;  // expr/shape_like.hpp
template <class X>
class ref_node;  // expr/ref.hpp

namespace detail {
/// Whether a node is written infix (`a + b`): as an operand, it is parenthesised.
template <class A>
inline constexpr bool written_infix = A::infix;
/// A reference prints as its target (`(1 - y) * s`, not `1 - y * s`).
template <class X>
inline constexpr bool written_infix<ref_node<X>> = written_infix<typename ref_node<X>::target_type>;

/// Whether a node may be a closed gate of a gradient (a zero of shape
/// (1, ..., 1) that reads nothing, printed as 0) or a sum of such: a sum
/// prints without it, and grad (grad/parts.hpp) does not take its shape for
/// the node's.
template <class A>
inline constexpr bool may_be_closed_gate = false;
template <class C>
inline constexpr bool may_be_closed_gate<gate_node<C>> = true;
template <class X>
inline constexpr bool may_be_closed_gate<ref_node<X>> = may_be_closed_gate<typename ref_node<X>::target_type>;
template <class S, class A, class B>
inline constexpr bool may_be_closed_gate<map_node<fn::plus, S, A, B>> = may_be_closed_gate<A> && may_be_closed_gate<B>;
}  // namespace detail

template <class... C>
struct type_list {};

/// A map node's signature when its operands are not all converted to its
/// result's element type R (a comparison, `where`, a generator's index):
/// R, then the type each operand is converted to.
template <class R, class... Casts>
struct map_types {};

namespace detail {
/// A map node's signature S as a result type and its operands' conversions.
/// In the common case, every operand converted to the result's type R, the
/// signature is R itself: `map_node<fn::plus, float, A, B>`. A gradient's
/// type repeats its forward expression thousands of times, and a debug build
/// spells each node out in full; the conversions' list was a third of a map
/// node's spelling.
template <class T, class Indices>
struct repeated;
template <class T, std::size_t... K>
struct repeated<T, std::index_sequence<K...>> {
  using type = type_list<std::conditional_t<K == K, T, void>...>;  // T, once per index
};
template <class S, std::size_t N>
struct map_signature {
  using result = S;
  using casts = typename repeated<S, std::make_index_sequence<N>>::type;
};
template <class R, class... Casts, std::size_t N>
struct map_signature<map_types<R, Casts...>, N> {
  static_assert(sizeof...(Casts) == N, "fusor: a map node's signature converts each of its operands");
  using result = R;
  using casts = type_list<Casts...>;
};

/// The conversion of operand K in a list of conversions.
template <std::size_t K, class Casts>
struct cast_at;
template <std::size_t K, class... Casts>
struct cast_at<K, type_list<Casts...>> {
  using type = std::tuple_element_t<K, std::tuple<Casts...>>;
};
template <std::size_t K, class Casts>
using cast_at_t = typename cast_at<K, Casts>::type;

/// The signature of a map node of result type R converting its operands to
/// Casts (a type_list).
template <class R, class Casts>
struct signature_of;
template <class R, class... Casts>
struct signature_of<R, type_list<Casts...>> {
  using type = std::conditional_t<(std::is_same_v<Casts, R> && ...), R, map_types<R, Casts...>>;
};
template <class R, class Casts>
using signature_of_t = typename signature_of<R, Casts>::type;

/// The map node of F over node types Args..., of result type R, converting its
/// operands to Casts: how map nodes are named where they are built.
template <class F, class R, class Casts, class... Args>
using map_t = map_node<F, signature_of_t<R, Casts>, Args...>;
}  // namespace detail

template <class F, class S, class... Args>
class map_node : public expression_base {
  static_assert((!std::is_reference_v<Args> && ...), "fusor: expression nodes never hold references");

 public:
  using value_type = typename detail::map_signature<S, sizeof...(Args)>::result;
  using functor = F;
  using casts = typename detail::map_signature<S, sizeof...(Args)>::casts;
  static constexpr int rank = detail::broadcast_rank(0, Args::rank...);
  static constexpr bool infix = requires { requires F::infix; } && sizeof...(Args) == 2;

  FUSOR_PLUMBING explicit map_node(Args... args) : args_(FUSOR_MOVE(args)...) {}

  FUSOR_PLUMBING const detail::operand_tuple<Args...>& args() const noexcept { return args_; }

  // The node protocol (expr/node.hpp): its operands, fused.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<Args...>;
  FUSOR_PLUMBING const detail::operand_tuple<Args...>& held() const noexcept { return args_; }
  template <class... H>
  auto remake(H... h) const {
    return map_node<F, S, H...>(FUSOR_MOVE(h)...);
  }

  /// Which operands are written in parentheses (infix ones): bit k for
  /// operand k. A number, read as a value: an array here was a variable of
  /// the program, one per node type, and a sanitizer's build describes each
  /// of its variables by its whole name — over a second derivative's types,
  /// hundreds of megabytes of names in one unit.
  static constexpr unsigned parenthesized = [] {
    unsigned bits = 0, k = 0;
    ((bits |= (detail::written_infix<Args> ? 1u : 0u) << k++), ...);
    return bits;
  }();

  std::string str() const {
    const std::array<std::string, sizeof...(Args)> texts =
        [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
          return std::array<std::string, sizeof...(Args)>{detail::get<K>(args_).str()...};
        }(std::index_sequence_for<Args...>{});
    std::array<std::string_view, sizeof...(Args)> views;
    for (std::size_t k = 0; k < texts.size(); ++k) views[k] = texts[k];
    unsigned zero_terms = 0;  // closed gates, which print as 0 (detail::map_text)
    if constexpr (std::is_same_v<F, fn::plus>) {
      std::size_t k = 0;
      ((zero_terms |= (detail::may_be_closed_gate<Args> && texts[k] == "0" ? 1u : 0u) << k, ++k), ...);
    }
    return detail::map_text(F::symbol, infix, views, parenthesized, zero_terms);
  }

 private:
  detail::operand_tuple<Args...> args_;
};

/// Conversion to T as numpy's astype does (fusor::cast<T>(x)).
template <element T, class A>
class cast_node : public expression_base {
 public:
  using value_type = T;
  static constexpr int rank = A::rank;
  FUSOR_PLUMBING explicit cast_node(A a) : arg_(FUSOR_MOVE(a)) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }

  // The node protocol (expr/node.hpp).
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return cast_node<T, H>(FUSOR_MOVE(h));
  }
  std::string str() const { return detail::cast_text(name(dtype_of<T>), arg_.str()); }

 private:
  A arg_;
};

namespace detail {

template <class X>
inline constexpr bool is_weak_v = std::remove_cvref_t<X>::weak;

/// The dtype two operands compute in: NumPy promotion, with C++ constants weak.
template <class A, class B>
constexpr dtype operand_promotion() {
  constexpr dtype a = dtype_of<typename A::value_type>, b = dtype_of<typename B::value_type>;
  if constexpr (is_weak_v<A> && !is_weak_v<B>) return promote_weak(b, a);
  else if constexpr (is_weak_v<B> && !is_weak_v<A>) return promote_weak(a, b);
  else return promote(a, b);
}
template <class A, class B>
using promoted_t = element_of_t<operand_promotion<A, B>()>;

/// NumPy gives a float for true division and float functions of integers:
/// float32 for integers of up to 16 bits (NumPy: float16, which fusor does not
/// have), float64 above.
template <element T>
using floating_t = std::conditional_t<std::is_floating_point_v<T>, T,
                                      std::conditional_t<(sizeof(T) <= 2), float, double>>;

/// The map node of F over operands of types X... (as passed: a node, a shared
/// variable, a number), computed in the dtypes Casts, of dtype R. Built where
/// it is returned, from FUSOR_AS_EXPRESSION of each operand: a helper function
/// would be one more instance named by every operand type.
template <class F, class R, class Casts, class... X>
using map_of = map_t<F, R, Casts, as_expression_t<X>...>;

/// At least one side is symbolic: 2 * 3 stays C++ arithmetic.
template <class A, class B>
concept symbolic_pair = operand<A> && operand<B> && (!element<std::remove_cvref_t<A>> || !element<std::remove_cvref_t<B>>);

}  // namespace detail

// ------------------------------------------------------------------ binary

#define FUSOR_ARITHMETIC_OPERATOR(OP, FUNCTOR)                                                         \
  template <class A, class B>                                                                          \
    requires detail::symbolic_pair<A, B>                                                               \
  [[nodiscard]] auto operator OP(A&& a, B&& b) {                                                       \
    using EA = as_expression_t<A>;                                                                     \
    using EB = as_expression_t<B>;                                                                     \
    using C = detail::promoted_t<EA, EB>;                                                              \
    static_assert(!std::is_same_v<C, bool> || !std::is_same_v<fn::FUNCTOR, fn::minus>,                \
                  "fusor: '-' on two bool operands is not defined (NumPy refuses it too); use "        \
                  "fusor::logical_xor-style comparisons (a != b) instead");                           \
    return detail::map_of<fn::FUNCTOR, C, type_list<C, C>, A, B>(                                      \
        FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));                                               \
  }

FUSOR_ARITHMETIC_OPERATOR(+, plus)
FUSOR_ARITHMETIC_OPERATOR(-, minus)
FUSOR_ARITHMETIC_OPERATOR(*, multiplies)
#undef FUSOR_ARITHMETIC_OPERATOR

/// True division: integers divide as floats (NumPy's `/`).
template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto operator/(A&& a, B&& b) {
  using C = detail::floating_t<detail::promoted_t<as_expression_t<A>, as_expression_t<B>>>;
  return detail::map_of<fn::divides, C, type_list<C, C>, A, B>(FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));
}

/// NumPy's `%` on integers (floor modulo).
template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto operator%(A&& a, B&& b) {
  using C = detail::promoted_t<as_expression_t<A>, as_expression_t<B>>;
  static_assert(std::is_integral_v<C> && !std::is_same_v<C, bool>,
                "fusor: '%' is defined for integer operands only; for floats use fusor::fmod-style arithmetic "
                "(x - y * floor(x / y))");
  return detail::map_of<fn::modulus, C, type_list<C, C>, A, B>(FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));
}

#define FUSOR_COMPARISON(OP, FUNCTOR)                                                                  \
  template <class A, class B>                                                                          \
    requires detail::symbolic_pair<A, B>                                                               \
  [[nodiscard]] auto operator OP(A&& a, B&& b) {                                                       \
    using C = detail::promoted_t<as_expression_t<A>, as_expression_t<B>>;                              \
    return detail::map_of<fn::FUNCTOR, bool, type_list<C, C>, A, B>(                                   \
        FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));                                               \
  }

FUSOR_COMPARISON(==, equal)
FUSOR_COMPARISON(!=, not_equal)
FUSOR_COMPARISON(<, less)
FUSOR_COMPARISON(<=, less_equal)
FUSOR_COMPARISON(>, greater)
FUSOR_COMPARISON(>=, greater_equal)
#undef FUSOR_COMPARISON

template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto logical_and(A&& a, B&& b) {
  return detail::map_of<fn::logical_and, bool, type_list<bool, bool>, A, B>(
      FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));
}
template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto logical_or(A&& a, B&& b) {
  return detail::map_of<fn::logical_or, bool, type_list<bool, bool>, A, B>(
      FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));
}
template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto operator&&(A&& a, B&& b) {
  return logical_and(FUSOR_FORWARD(a), FUSOR_FORWARD(b));
}
template <class A, class B>
  requires detail::symbolic_pair<A, B>
[[nodiscard]] auto operator||(A&& a, B&& b) {
  return logical_or(FUSOR_FORWARD(a), FUSOR_FORWARD(b));
}

#define FUSOR_PROMOTING_FUNCTION(NAME, FUNCTOR)                                                        \
  template <class A, class B>                                                                          \
    requires detail::symbolic_pair<A, B>                                                               \
  [[nodiscard]] auto NAME(A&& a, B&& b) {                                                              \
    using C = detail::promoted_t<as_expression_t<A>, as_expression_t<B>>;                              \
    return detail::map_of<fn::FUNCTOR, C, type_list<C, C>, A, B>(                                      \
        FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));                                               \
  }

FUSOR_PROMOTING_FUNCTION(maximum, maximum)
FUSOR_PROMOTING_FUNCTION(minimum, minimum)
FUSOR_PROMOTING_FUNCTION(fmax, fmax)
FUSOR_PROMOTING_FUNCTION(fmin, fmin)
FUSOR_PROMOTING_FUNCTION(pow, power)
#undef FUSOR_PROMOTING_FUNCTION

// ------------------------------------------------------------------ unary

template <class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto operator-(A&& a) {
  using T = value_type_t<as_expression_t<A>>;
  static_assert(!std::is_same_v<T, bool>, "fusor: unary '-' on a bool expression is not defined; use !x");
  return detail::map_of<fn::negate, T, type_list<T>, A>(FUSOR_AS_EXPRESSION(a));
}
template <class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto logical_not(A&& a) {
  return detail::map_of<fn::logical_not, bool, type_list<bool>, A>(FUSOR_AS_EXPRESSION(a));
}
template <class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto operator!(A&& a) {
  return logical_not(FUSOR_FORWARD(a));
}
template <class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto abs(A&& a) {
  using T = value_type_t<as_expression_t<A>>;
  return detail::map_of<fn::absolute, T, type_list<T>, A>(FUSOR_AS_EXPRESSION(a));
}

#define FUSOR_FLOAT_FUNCTION(NAME, FUNCTOR)                                                            \
  template <class A>                                                                                   \
    requires(operand<A> && !element<std::remove_cvref_t<A>>)                                           \
  [[nodiscard]] auto NAME(A&& a) {                                                                     \
    using T = detail::floating_t<value_type_t<as_expression_t<A>>>;                                    \
    return detail::map_of<fn::FUNCTOR, T, type_list<T>, A>(FUSOR_AS_EXPRESSION(a));                    \
  }

FUSOR_FLOAT_FUNCTION(sqrt, sqrt_op)
FUSOR_FLOAT_FUNCTION(exp, exp_op)
FUSOR_FLOAT_FUNCTION(expm1, expm1_op)
FUSOR_FLOAT_FUNCTION(log, log_op)
FUSOR_FLOAT_FUNCTION(log1p, log1p_op)
FUSOR_FLOAT_FUNCTION(sin, sin_op)
FUSOR_FLOAT_FUNCTION(cos, cos_op)
FUSOR_FLOAT_FUNCTION(tan, tan_op)
FUSOR_FLOAT_FUNCTION(tanh, tanh_op)
FUSOR_FLOAT_FUNCTION(sigmoid, sigmoid)
FUSOR_FLOAT_FUNCTION(softplus, softplus)
#undef FUSOR_FLOAT_FUNCTION

namespace detail {
/// `x` as a value of dtype T: a cast only where the dtype differs (so that a
/// rewritten or differentiated expression keeps the nodes it is built from).
template <element T, class X>
auto as_dtype(const X& x) {
  if constexpr (std::is_same_v<value_type_t<X>, T>) return x;
  else return cast<T>(x);
}
}  // namespace detail

/// x, as a constant to fusor::grad: no gradient flows through it (Theano's
/// zero_grad, JAX's stop_gradient). It costs nothing in a fused kernel.
template <class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto stop_gradient(A&& a) {
  using T = value_type_t<as_expression_t<A>>;
  return detail::map_of<fn::stop_gradient, T, type_list<T>, A>(FUSOR_AS_EXPRESSION(a));
}

// ------------------------------------------------------------------ ternary

/// where(condition, a, b): a where condition holds, else b (NumPy's where).
template <class Cond, class A, class B>
  requires(operand<Cond> && operand<A> && operand<B>)
[[nodiscard]] auto where(Cond&& c, A&& a, B&& b) {
  using C = detail::promoted_t<as_expression_t<A>, as_expression_t<B>>;
  return detail::map_of<fn::where, C, type_list<bool, C, C>, Cond, A, B>(
      FUSOR_AS_EXPRESSION(c), FUSOR_AS_EXPRESSION(a), FUSOR_AS_EXPRESSION(b));
}

/// clip(x, lo, hi) = minimum(maximum(x, lo), hi).
template <class X, class L, class H>
  requires(operand<X> && operand<L> && operand<H> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto clip(X&& x, L&& lo, H&& hi) {
  using EX = as_expression_t<X>;
  using LE = as_expression_t<L>;
  using HE = as_expression_t<H>;
  using C = detail::promoted_t<EX, LE>;
  // NEP 50 over three operands: a C++ number (weak) counts only where its kind
  // is above the others' (clip(float32 x, -0.5, 2.5) is float32). x and lo
  // are strong when either is; hi then promotes against that result.
  constexpr bool strong = !detail::is_weak_v<EX> || !detail::is_weak_v<LE>;
  constexpr dtype h = dtype_of<value_type_t<HE>>;
  constexpr dtype r = detail::is_weak_v<HE> && strong    ? promote_weak(dtype_of<C>, h)
                      : !detail::is_weak_v<HE> && !strong ? promote_weak(h, dtype_of<C>)
                                                          : promote(dtype_of<C>, h);
  using R = element_of_t<r>;
  return detail::map_of<fn::clip, R, type_list<R, R, R>, X, L, H>(
      FUSOR_AS_EXPRESSION(x), FUSOR_AS_EXPRESSION(lo), FUSOR_AS_EXPRESSION(hi));
}

/// Converts to T as numpy's astype does (integers wrap, floats truncate).
template <element T, class A>
  requires(operand<A> && !element<std::remove_cvref_t<A>>)
[[nodiscard]] auto cast(A&& a) {
  return cast_node<T, as_expression_t<A>>(FUSOR_AS_EXPRESSION(a));
}

}  // namespace fusor
