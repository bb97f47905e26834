// fusor/expr/softmax.hpp — softmax, log_softmax and logsumexp, computed
// stably: the exponentials are taken of x minus its maximum along the reduced
// axes, so that no exponential overflows (exp(1000) is inf in double) and the
// largest one is exactly 1 (so the sum is at least 1 and its log finite).
//
//   fusor::softmax(z, -1)         exp(z - m) / sum(exp(z - m), -1, keepdims)
//   fusor::log_softmax(z, -1)     (z - m) - log(sum(exp(z - m), -1, keepdims))
//   fusor::logsumexp(z, -1)       m + log(sum(exp(z - m), -1))
//
// The maximum m is a stop_gradient: these functions do not depend on it
// (it cancels), so their gradients, which fusor::grad derives from the
// compositions, are the textbook ones (softmax's, for logsumexp).
// Each is a few fused nodes: a max reduction, a sum reduction fused with the
// exponentials, and elementwise work fused into whatever reads the result.
//
// Infinities, as SciPy's scipy.special functions give them: for logsumexp and
// log_softmax a maximum that is not finite shifts by 0, so no inf - inf
// appears where the naive form has none (logsumexp of a slice of -inf is
// -inf, with a +inf it is +inf, with a NaN NaN; log_softmax of a slice with
// a +inf is NaN there and -inf elsewhere); softmax shifts by the maximum as it
// is (a slice with a +inf, or all -inf, is NaN throughout). Slices with some
// -inf (masked entries) give 0 and -inf there and, elsewhere, the values (and
// gradients) they would have without those entries.
#pragma once

#include <array>
#include <type_traits>

#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_like.hpp"

namespace fusor {

namespace detail {
/// The shift: the maximum where it is finite, else 0 (SciPy's logsumexp), so
/// that x - m is never inf - inf; no gradient goes through it.
template <class M>
auto finite_shift(M m) {
  using V = value_type_t<M>;
  return map_t<fn::finite_shift, V, type_list<V>, M>(FUSOR_MOVE(m));
}
/// log(sum(exp(x), axes[, keepdims])) as m + log(sum(exp(x - m), ...)), with
/// the reduced axes of a reduce node (n == 0: all), of result rank R.
template <int R, class X>
auto stable_logsumexp(const X& x, const std::array<int, max_rank>& axes, int n, bool keep) {
  static_assert(std::is_floating_point_v<value_type_t<X>>,
                "fusor::logsumexp / softmax: the operand must be float or double (use fusor::cast)");
  const auto m = finite_shift(reduce_node<red::max, X, X::rank>(x, axes, n, true));
  const auto s = reduce_node<red::sum, decltype(exp(x - m)), R>(exp(x - m), axes, n, keep);
  // the shift read at the result's shape (a reshape of memory: no copy)
  // as_written: already stable, the rewrites leave it as it is
  using L = decltype(log(s));
  return detail::map_t<fn::as_written, value_type_t<L>, type_list<value_type_t<L>>, L>(log(s)) +
         finite_shift(reshape_like(reduce_node<red::max, X, X::rank>(x, axes, n, true), s));
}
template <class X>
auto shift_along(const X& x, int axis) {
  return finite_shift(reduce_node<red::max, X, X::rank>(x, {axis}, 1, true));
}
}  // namespace detail

/// log(sum(exp(x))) over every axis, stably (rank 0).
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto logsumexp(X&& x) {
  using A = as_expression_t<X>;
  return detail::stable_logsumexp<A::rank == dynamic_rank ? dynamic_rank : 0>(FUSOR_AS_EXPRESSION(x), {}, 0,
                                                                              false);
}
/// log(sum(exp(x), axis)), stably.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto logsumexp(X&& x, int axis) {
  using A = as_expression_t<X>;
  static_assert(A::rank != 0, "fusor::logsumexp: a rank-0 operand has no axis");
  return detail::stable_logsumexp<A::rank == dynamic_rank ? dynamic_rank : A::rank - 1>(
      FUSOR_AS_EXPRESSION(x), {axis}, 1, false);
}
/// log(sum(exp(x), axis, keepdims)), stably.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto logsumexp(X&& x, int axis, keepdims_t) {
  using A = as_expression_t<X>;
  return detail::stable_logsumexp<A::rank>(FUSOR_AS_EXPRESSION(x), {axis}, 1, true);
}

/// log(softmax(x, axis)) = x - logsumexp(x, axis, keepdims), stably.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto log_softmax(X&& x, int axis = -1) {
  const auto e = FUSOR_AS_EXPRESSION(x);
  static_assert(std::is_floating_point_v<value_type_t<decltype(e)>>,
                "fusor::log_softmax: the operand must be float or double (use fusor::cast)");
  const auto shifted = e - detail::shift_along(e, axis);
  const auto lse = log(sum(exp(shifted), axis, keepdims));  // stable already: the rewrites leave it as it is
  using L = std::remove_cvref_t<decltype(lse)>;
  return shifted - detail::map_t<fn::as_written, value_type_t<L>, type_list<value_type_t<L>>, L>(lse);
}

/// exp(x) / sum(exp(x), axis, keepdims), stably.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto softmax(X&& x, int axis = -1) {
  const auto e = FUSOR_AS_EXPRESSION(x);
  static_assert(std::is_floating_point_v<value_type_t<decltype(e)>>,
                "fusor::softmax: the operand must be float or double (use fusor::cast)");
  // SciPy's softmax shifts by the maximum as it is (no finite guard)
  const auto num = exp(e - stop_gradient(reduce_node<red::max, decltype(e), decltype(e)::rank>(e, {axis}, 1, true)));
  return num / sum(num, axis, keepdims);
}

}  // namespace fusor
