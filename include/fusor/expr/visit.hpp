// fusor/expr/visit.hpp — walking an expression's leaves: which shared
// variables and inputs it reads, and the broadcastable pattern it has. Used
// when a function is built, to decide in-place writes and check updates.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/view.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"

namespace fusor {

/// Calls f(leaf) for every leaf (input, shared_leaf, constant, iota) of `e`,
/// in the order the node protocol holds them (expr/node.hpp); nothing below a
/// closed gate.
template <class X, class F>
void visit_leaves(const X& e, F&& f) {
  if constexpr (!X::holds) {
    f(e);
  } else if constexpr (is_gate_v<X>) {
    if (e.on()) visit_leaves(e.arg(), f);
  } else {
    const auto& held = e.held();
    [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      (visit_leaves(detail::get<K>(held), f), ...);
    }(detail::indices_of<decltype(held)>);
  }
}

/// Identities of the shared variables an expression reads.
template <class X>
std::vector<std::uint64_t> shared_reads(const X& e) {
  std::vector<std::uint64_t> ids;
  visit_leaves(e, [&](const auto& leaf) {
    if constexpr (detail::has<detail::member::variable, std::remove_cvref_t<decltype(leaf)>>) ids.push_back(leaf.variable().id());
  });
  return ids;
}

/// Whether an expression's value has the same element at index i as its
/// operands at index i for every operand (no reduction, permutation, reshape
/// or dot anywhere): the static half of the in-place decision.
template <class X>
inline constexpr bool is_elementwise_v = false;
template <class T, int N>
inline constexpr bool is_elementwise_v<input<T, N>> = true;
template <class L>
  requires is_basic_shared_leaf_v<L>
inline constexpr bool is_elementwise_v<L> = true;
template <element E>
inline constexpr bool is_elementwise_v<constant<E>> = true;
template <int N>
inline constexpr bool is_elementwise_v<iota_node<N>> = true;
template <class Fn, class S, class... A>
inline constexpr bool is_elementwise_v<map_node<Fn, S, A...>> = (is_elementwise_v<A> && ...);
template <element T, class A>
inline constexpr bool is_elementwise_v<cast_node<T, A>> = is_elementwise_v<A>;
template <class X>
inline constexpr bool is_elementwise_v<ref_node<X>> = is_elementwise_v<typename ref_node<X>::target_type>;

/// The broadcastable pattern (Theano's) an expression has, right-aligned to
/// `rank` axes: axis d is broadcastable when every operand that has it is.
/// Reductions with keepdims make their reduced axes broadcastable.
template <class X>
std::vector<bool> broadcastable_pattern(const X& e, std::size_t rank);

namespace detail {
template <class X>
void pattern_into(const X& e, std::vector<bool>& p);

inline void and_right_aligned(std::vector<bool>& p, const std::vector<bool>& q) {
  const std::size_t r = p.size(), s = q.size();
  for (std::size_t i = 0; i < s && i < r; ++i) p[r - 1 - i] = p[r - 1 - i] && q[s - 1 - i];
}
}  // namespace detail

template <class X>
std::vector<bool> broadcastable_pattern(const X& e, std::size_t rank) {
  std::vector<bool> p(rank, true);
  detail::pattern_into(e, p);
  return p;
}

namespace detail {
template <class X>
void pattern_into(const X& e, std::vector<bool>& p) {
  if constexpr (detail::has<detail::member::variable, X>) {
    const auto& v = e.variable();
    std::vector<bool> q = v.broadcastable();
    and_right_aligned(p, q);
  } else if constexpr (detail::has<detail::member::same_as, X>) {
    std::vector<bool> q(static_cast<std::size_t>(X::rank));
    for (std::size_t d = 0; d < q.size(); ++d) q[d] = e.broadcastable(d);
    and_right_aligned(p, q);
  } else if constexpr (detail::has<detail::member::value, X>) {
    // a constant broadcasts everywhere
  } else if constexpr (detail::has<detail::member::shape_rank, X>) {
    std::vector<bool> q(e.shape().rank());  // a constructor: its extents of 1
    for (std::size_t d = 0; d < q.size(); ++d) q[d] = e.shape()[d] == 1;
    and_right_aligned(p, q);
  } else if constexpr (detail::has<detail::member::like, X>) {
    pattern_into(e.like(), p);  // sum_to, reshape_like: the target's shape
  } else if constexpr (detail::has<detail::member::numerator, X>) {
    // a rank-0 size ratio broadcasts everywhere
  } else if constexpr (detail::has<detail::member::join, X> || detail::has<detail::member::indices, X>) {
    std::fill(p.begin(), p.end(), false);  // assembled: extents change
  } else if constexpr (detail::has<detail::member::args, X>) {
    [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      (pattern_into(detail::get<K>(e.args()), p), ...);
    }(detail::indices_of<decltype(e.args())>);
  } else if constexpr (detail::has<detail::member::keeps_dims, X>) {
    if (!e.keeps_dims()) {
      std::fill(p.begin(), p.end(), false);  // a different rank: nothing is known
      return;
    }
    std::vector<bool> q = broadcastable_pattern(e.arg(), p.size());
    if (e.all_axes()) std::fill(q.begin(), q.end(), true);
    else
      for (int i = 0; i < e.axis_count(); ++i) {
        const int r = static_cast<int>(q.size());
        const int a = e.axis(i) < 0 ? e.axis(i) + r : e.axis(i);
        if (a >= 0 && a < r) q[static_cast<std::size_t>(a)] = true;
      }
    and_right_aligned(p, q);
  } else if constexpr (detail::has<detail::member::arg, X>) {
    // cast keeps the pattern; transpose, reshape and views lose what we know
    if constexpr (detail::has<detail::member::reverses, X> || detail::has<detail::member::extent, X> ||
                  detail::has<detail::member::slice_count, X> || detail::has<detail::member::axis1, X>)
      std::fill(p.begin(), p.end(), false);
    else pattern_into(e.arg(), p);
  } else {
    std::fill(p.begin(), p.end(), false);  // dot
  }
}
}  // namespace detail

}  // namespace fusor
