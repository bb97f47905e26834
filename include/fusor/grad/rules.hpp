// fusor/grad/rules.hpp — the local derivatives of the elementwise functors:
// for an adjoint g of a node e = F(x, y, ...), the contribution to operand K
// (before broadcasting is summed back: see grad/parts.hpp).
//
// Each rule is written over the node's own operands and the node itself, so
// that a derivative reuses the forward expression's nodes (exp's derivative is
// g * e: the exponential is computed once per call, for the cost and for the
// gradient alike). Subgradients where a function is not differentiable:
//   abs'(0) = 0; maximum / minimum / fmax / fmin send the gradient to the
//   operand they return (the first on a tie); clip sends it to x inside
//   [lo, hi] (ties included) and to the bound it returns outside; where sends
//   it to the branch it takes; the condition, comparisons, integer and bool
//   results, generators and random draws get none.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/grad/parts.hpp"

namespace fusor::detail::ad {

/// Rule<F>::has: whether F has a derivative rule; partial<K>(g, e, args...)
/// the contribution to operand K (args already of the type F computes in).
/// `has_operand<K>` false: operand K gets no gradient (a condition, an index).
template <class F>
struct rule {
  static constexpr bool has = false;
};

/// -g, or x where g is -x (through references): an adjoint negated twice on
/// its way down (a `-` inside a difference) stays the adjoint, with no double
/// negation in its type, its text or its loops.
template <class X>
struct negation_of {
  static constexpr bool value = false;
};
template <class R, class A>
struct negation_of<map_node<fn::negate, R, A>> {
  static constexpr bool value = std::is_same_v<value_type_t<A>, R>;
  static const A& operand(const map_node<fn::negate, R, A>& e) { return detail::get<0>(e.args()); }
};
template <class X>
struct negation_of<ref_node<X>> : negation_of<typename ref_node<X>::target_type> {
  static const auto& operand(const ref_node<X>& e) {
    return negation_of<typename ref_node<X>::target_type>::operand(e.target());
  }
};
template <class G>
auto negated(const G& g) {
  if constexpr (negation_of<G>::value) return ref(negation_of<G>::operand(g));
  else return -g;
}
/// g * f and g / f, with a negated adjoint's sign kept outside: -(p * f) for
/// g = -p, so that the next negation meets it (the logistic regression's
/// adjoint -(-(g * -y) * sigmoid(u)) is (g * -y) * sigmoid(u)). Exact: a
/// negation only flips the sign bit.
template <class G, class F>
auto times(const G& g, const F& f) {
  if constexpr (negation_of<G>::value) return -(ref(negation_of<G>::operand(g)) * f);
  else return g * f;
}
template <class G, class F>
auto over(const G& g, const F& f) {
  if constexpr (negation_of<G>::value) return -(ref(negation_of<G>::operand(g)) / f);
  else return g / f;
}

#define FUSOR_GRAD_UNARY(F, EXPR)                                       \
  template <>                                                           \
  struct rule<fn::F> {                                                  \
    static constexpr bool has = true;                                   \
    template <std::size_t K>                                            \
    static constexpr bool has_operand = true;                           \
    template <std::size_t K, class G, class E, class X>                 \
    static auto partial(const G& g, const E& e, const X& x) {           \
      (void)e;                                                          \
      (void)x;                                                          \
      return EXPR;                                                      \
    }                                                                   \
  };

FUSOR_GRAD_UNARY(negate, negated(g))
FUSOR_GRAD_UNARY(as_written, g)
FUSOR_GRAD_UNARY(absolute, where(x > 0, g, where(x < 0, negated(g), 0)))
FUSOR_GRAD_UNARY(sqrt_op, over(g, e + e))
FUSOR_GRAD_UNARY(exp_op, times(g, e))
FUSOR_GRAD_UNARY(expm1_op, times(g, e + 1))
FUSOR_GRAD_UNARY(log_op, over(g, x))
FUSOR_GRAD_UNARY(log1p_op, over(g, x + 1))
FUSOR_GRAD_UNARY(sin_op, times(g, cos(x)))
FUSOR_GRAD_UNARY(cos_op, negated(times(g, sin(x))))
FUSOR_GRAD_UNARY(tan_op, times(g, e * e + 1))
FUSOR_GRAD_UNARY(tanh_op, times(g, 1 - e * e))
FUSOR_GRAD_UNARY(sigmoid, times(g, e * (1 - e)))
FUSOR_GRAD_UNARY(softplus, times(g, sigmoid(x)))
#undef FUSOR_GRAD_UNARY

/// Operands that get no gradient however they are used.
template <>
struct rule<fn::stop_gradient> {
  static constexpr bool has = true;
  template <std::size_t K>
  static constexpr bool has_operand = false;
};
template <>
struct rule<fn::finite_shift> : rule<fn::stop_gradient> {};
template <>
struct rule<fn::fill_like> {  // full_like(x, v): x gives the shape only
  static constexpr bool has = true;
  template <std::size_t K>
  static constexpr bool has_operand = false;
};

#define FUSOR_GRAD_BINARY(F, EXPR0, EXPR1)                              \
  template <>                                                           \
  struct rule<fn::F> {                                                  \
    static constexpr bool has = true;                                   \
    template <std::size_t K>                                            \
    static constexpr bool has_operand = true;                           \
    template <std::size_t K, class G, class E, class X, class Y>        \
    static auto partial(const G& g, const E& e, const X& x, const Y& y) { \
      (void)e;                                                          \
      (void)x;                                                          \
      (void)y;                                                          \
      if constexpr (K == 0) return EXPR0;                               \
      else return EXPR1;                                                \
    }                                                                   \
  };

FUSOR_GRAD_BINARY(plus, g, g)
FUSOR_GRAD_BINARY(minus, g, negated(g))
FUSOR_GRAD_BINARY(multiplies, times(g, y), times(g, x))
FUSOR_GRAD_BINARY(divides, over(g, y), over(negated(times(g, e)), y))
// The operand the selection returns gets the gradient (the first on a tie).
FUSOR_GRAD_BINARY(maximum, where(x < y, 0, g), where(x < y, g, 0))
FUSOR_GRAD_BINARY(fmax, where(x < y, 0, g), where(x < y, g, 0))
FUSOR_GRAD_BINARY(minimum, where(y < x, 0, g), where(y < x, g, 0))
FUSOR_GRAD_BINARY(fmin, where(y < x, 0, g), where(y < x, g, 0))
// PyTensor's rules: d/dx x^y = y x^(y-1) (so d/dx 2 x = 2 x^0 = 2 at x = 0 too,
// 0^0 being 1; at x = y = 0 it is 0 * inf, NaN, as there), and d/dy x^y =
// x^y log x, taken as 0 where x is 0 (log 0 is -inf).
FUSOR_GRAD_BINARY(power, times(times(g, y), pow(x, y - 1)), where(x == 0, 0, times(times(g, e), log(x))))
#undef FUSOR_GRAD_BINARY

/// broadcast_to(x, shape): x's adjoint is g summed back (the caller's sum_to).
template <>
struct rule<fn::broadcast_first> {
  static constexpr bool has = true;
  template <std::size_t K>
  static constexpr bool has_operand = K == 0;
  template <std::size_t K, class G, class E, class X, class I>
  static auto partial(const G& g, const E&, const X&, const I&) {
    return g;
  }
};

template <>
struct rule<fn::where> {
  static constexpr bool has = true;
  template <std::size_t K>
  static constexpr bool has_operand = K != 0;  // the condition gets none
  template <std::size_t K, class G, class E, class C, class A, class B>
  static auto partial(const G& g, const E&, const C& c, const A&, const B&) {
    if constexpr (K == 1) return where(c, g, 0);
    else return where(c, 0, g);
  }
};

/// clip(x, lo, hi) = minimum(maximum(x, lo), hi).
template <>
struct rule<fn::clip> {
  static constexpr bool has = true;
  template <std::size_t K>
  static constexpr bool has_operand = true;
  template <std::size_t K, class G, class E, class X, class L, class H>
  static auto partial(const G& g, const E&, const X& x, const L& lo, const H& hi) {
    if constexpr (K == 0) return where(logical_or(x < lo, hi < x), 0, g);
    else if constexpr (K == 1) return where(logical_and(x < lo, lo <= hi), g, 0);
    else return where(hi < maximum(x, lo), g, 0);
  }
};

}  // namespace fusor::detail::ad
