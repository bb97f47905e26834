// fusor/expr/operands.hpp — the operand types of a node, as a type list: what
// a compile-time walk over an expression's type (the reverse walk's structure,
// the rewrites' "is there anything to rewrite") descends into. Each node
// declares them (operand_types, expr/node.hpp). The shape-only operands of
// sum_to, reshape_like and size_ratio, and the forward node a place reads its
// shape from, are not operands: nothing is computed from their values.
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

/// The operand types of a node (its value operands: expr/node.hpp's protocol).
template <class X>
struct children_of {
  using type = typename X::operand_types;
};

/// Whether some node of X's tree (X included) satisfies Pred<node>::value.
template <template <class> class Pred, class X, class Children = typename children_of<X>::type>
struct any_node;
template <template <class> class Pred, class X, class... C>
struct any_node<Pred, X, tlist<C...>> : std::bool_constant<Pred<X>::value || (any_node<Pred, C>::value || ...)> {};

}  // namespace fusor::detail
