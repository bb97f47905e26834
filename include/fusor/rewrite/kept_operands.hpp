// fusor/rewrite/kept_operands.hpp — a function's reductions of an operand that
// one of its products already computes into memory read it from there.
//
// A product (dot) reads its operands from memory, so an elementwise operand
// of a dot is computed into a temporary by a kernel of its own. A reduction
// of the same expression elsewhere in the function (a bias's gradient,
// sum(dz, 0), beside the weights' dot(transpose(h), dz)) fuses it: its kernel
// is a whole reduction loop over the operand's tree. The host's planner
// already has the reduction read the temporary when it finds one
// (materialised_twin), but the fused loop is compiled all the same, and it is
// among the largest code a training step's unit compiles.
//
// So a function rewrites, in its outputs and updates, every reduction whose
// operand is a map or a cast of the type of some product's operand into a
// reduction of a kept reference to it (expr/fusion.hpp: ref_node<kept_operand<A>>).
// A kept reference is read as a leaf by every backend's evaluator, and its
// target is computed into memory by the kernel the product instantiates
// anyway; the graph makes the two one node (a reference is its target's
// node), computed once. The decision is made from types, because kernels are
// instantiated from them; where two nodes share a type but not their values,
// the reduction's operand is computed into memory once more, by that same
// kernel: one temporary more, never a wrong value. References (a gradient's
// adjoints) are not looked into: a gradient's sums read their adjoints from
// memory already.
//
// Two halves: the function's deduction decides from all its outputs and
// updates together which operands are kept (products_in); converting one
// group of specs to the deduced types finds them again from the deduced
// types alone (kept_in), which name every kept operand.
#pragma once

#include <type_traits>
#include <utility>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/fusion.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/ref.hpp"

namespace fusor::detail::keep {

/// The sub-expression types X holds (expr/node.hpp), as a tlist; none for a
/// leaf and for a reference (not looked into: above).
template <class Held, class Seq = std::make_index_sequence<std::tuple_size_v<Held>>>
struct held_list;
template <class Held, std::size_t... K>
struct held_list<Held, std::index_sequence<K...>> {
  using type = tlist<std::remove_cvref_t<decltype(detail::get<K>(std::declval<const Held&>()))>...>;
};
template <class X>
struct held_types {
  using type = tlist<>;
};
template <class X>
  requires(X::holds && !is_ref_v<X>)
struct held_types<X> {
  using type = typename held_list<std::remove_cvref_t<decltype(std::declval<const X&>().held())>>::type;
};
template <class X>
using held_types_t = typename held_types<X>::type;

/// Whether a reduction of A may read A from memory: A is computed by a fused
/// kernel of its own (a map or a cast), not a leaf, a reference or a node
/// that is in memory anyway.
template <class A>
inline constexpr bool fused_operand_v = false;
template <class F, class S, class... A>
inline constexpr bool fused_operand_v<map_node<F, S, A...>> = true;
template <element T, class A>
inline constexpr bool fused_operand_v<cast_node<T, A>> = true;

/// Whether X, outside references, holds a product one of whose operands is A.
template <class A, class X, class Held = held_types_t<X>>
struct has_product_of;
template <class A, class X, class... H>
struct has_product_of<A, X, tlist<H...>> : std::bool_constant<(has_product_of<A, H>::value || ...)> {};
template <class A, class P, class Q, class... H>
struct has_product_of<A, dot_node<P, Q>, tlist<H...>>
    : std::bool_constant<std::is_same_v<A, P> || std::is_same_v<A, Q> || (has_product_of<A, H>::value || ...)> {};

/// Whether X holds a kept reference to A (what the rewrite below made).
template <class A, class X, class Held = held_types_t<X>>
struct has_kept_of;
template <class A, class X, class... H>
struct has_kept_of<A, X, tlist<H...>> : std::bool_constant<(has_kept_of<A, H>::value || ...)> {};
template <class A, class B, class... H>
struct has_kept_of<A, ref_node<kept_operand<B>>, tlist<H...>> : std::is_same<A, B> {};

/// The operands to keep: those of the products of the expressions E... (the
/// function's deduction), or those kept already in them (a conversion to the
/// deduced types).
template <class... E>
struct products_in {
  template <class A>
  static constexpr bool has = (has_product_of<A, E>::value || ... || false);
};
template <class... E>
struct kept_in {
  template <class A>
  static constexpr bool has = (has_kept_of<A, E>::value || ... || false);
};

/// Whether X is a reduction of an operand Set keeps: the rewrite's one case.
template <class Set, class X>
inline constexpr bool keeps_operand_v = false;
template <class Set, class Op, class A, int Rank>
inline constexpr bool keeps_operand_v<Set, reduce_node<Op, A, Rank>> = fused_operand_v<A> && Set::template has<A>;

/// Whether the rewrite changes X: X, or a node in it outside references, is
/// such a reduction.
template <class Set, class X, class Held = held_types_t<X>>
struct changes;
template <class Set, class X, class... H>
struct changes<Set, X, tlist<H...>>
    : std::bool_constant<keeps_operand_v<Set, X> || (changes<Set, H>::value || ...)> {};

/// X with every reduction of an operand Set keeps reading a kept reference
/// to it; X itself (the same type) where there is none.
template <class Set, class X>
auto keep_operands(const X& e) {
  if constexpr (!changes<Set, X>::value) {
    return e;
  } else if constexpr (keeps_operand_v<Set, X>) {
    return e.remake(ref_node<kept_operand<std::remove_cvref_t<decltype(e.arg())>>>(e.arg()));
  } else {
    const auto& held = e.held();
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return e.remake(keep_operands<Set>(detail::get<K>(held))...);
    }(detail::indices_of<decltype(held)>);
  }
}
template <class Set, class X>
using keep_operands_t = decltype(keep_operands<Set>(std::declval<const X&>()));

}  // namespace fusor::detail::keep
