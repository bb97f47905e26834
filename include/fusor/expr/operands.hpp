// fusor/expr/operands.hpp — the operand types of each node kind, as a type
// list: what a compile-time walk over an expression's type (the reverse
// walk's structure, the rewrites' "is there anything to rewrite") descends
// into. The shape-only operands of sum_to, reshape_like and size_ratio, and
// the forward node a place reads its shape from, are not operands: nothing is
// computed from their values.
#pragma once

#include <cstddef>
#include <type_traits>

#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/view.hpp"

namespace fusor::detail {

template <class... T>
struct tlist {
  static constexpr std::size_t size = sizeof...(T);
};

/// The operand types of a node.
template <class X>
struct children_of {
  using type = tlist<>;  // leaves
};
template <class F, class R, class C, class... A>
struct children_of<map_node<F, R, C, A...>> {
  using type = tlist<A...>;
};
template <element T, class A>
struct children_of<cast_node<T, A>> {
  using type = tlist<A>;
};
template <class Op, class A, int R>
struct children_of<reduce_node<Op, A, R>> {
  using type = tlist<A>;
};
template <class A, class B>
struct children_of<dot_node<A, B>> {
  using type = tlist<A, B>;
};
template <class A>
struct children_of<transpose_node<A>> {
  using type = tlist<A>;
};
template <class A, int N>
struct children_of<reshape_node<A, N>> {
  using type = tlist<A>;
};
template <class A, int N>
struct children_of<view_node<A, N>> {
  using type = tlist<A>;
};
template <class A>
struct children_of<diagonal_node<A>> {
  using type = tlist<A>;
};
template <class A>
struct children_of<specify_node<A>> {
  using type = tlist<A>;
};
template <class A, class I, int N>
struct children_of<take_node<A, I, N>> {
  using type = tlist<A, I>;
};
template <int N, class... A>
struct children_of<join_node<N, A...>> {
  using type = tlist<A...>;
};
template <class G, class L>
struct children_of<sum_to_node<G, L>> {
  using type = tlist<G>;
};
template <class G, class L>
struct children_of<reshape_like_node<G, L>> {
  using type = tlist<G>;
};
template <class G, class F, std::size_t K>
struct children_of<place_node<G, F, K>> {
  using type = tlist<G>;
};
template <class C>
struct children_of<gate_node<C>> {
  using type = tlist<C>;
};
template <class X>
struct children_of<ref_node<X>> {
  using type = tlist<X>;
};

/// Whether some node of X's tree (X included) satisfies Pred<node>::value.
template <template <class> class Pred, class X, class Children = typename children_of<X>::type>
struct any_node;
template <template <class> class Pred, class X, class... C>
struct any_node<Pred, X, tlist<C...>> : std::bool_constant<Pred<X>::value || (any_node<Pred, C>::value || ...)> {};

}  // namespace fusor::detail
