// fusor/core/detect.hpp — whether a type has a member, asked by the detection
// idiom (a partial specialization over std::void_t), not by a requires-expression.
#pragma once

#include <type_traits>
#include <utility>

namespace fusor::detail {

// Why not `if constexpr (requires { e.variable(); })`: when a requirement of a
// requires-expression fails, clang (14 at least) writes the failure's message
// into the program — "no member named 'variable' in '<the type>'" — naming the
// type in full. An expression node's type spells out the tree below it, and a
// gradient's tree shares subtrees, so written out it grows exponentially with
// its depth: the probes of one second-derivative test made clang print types
// for minutes and gigabytes. A substitution that fails while a partial
// specialization is matched is discarded without being written (a 22-level
// tree of pairs, one probe per level: 1.6 s through requires-expressions, 0.07 s
// here; g++ takes the same time either way).
template <class, template <class> class Op, class X>
struct detector : std::false_type {};
template <template <class> class Op, class X>
struct detector<std::void_t<Op<X>>, Op, X> : std::true_type {};

/// Whether Op<X> is well-formed: `has<member::variable, X>`.
template <template <class> class Op, class X>
inline constexpr bool has = detector<void, Op, X>::value;

/// The members fusor asks a node about (expr/visit.hpp, the graph builder,
/// the gradient), one alias each: `has<member::NAME, X>`.
namespace member {
template <class X>
using variable = decltype(std::declval<const X&>().variable());
template <class X>
using same_as = decltype(std::declval<const X&>().same_as(std::declval<const X&>()));
template <class X>
using value = decltype(std::declval<const X&>().value());
template <class X>
using shape_rank = decltype(std::declval<const X&>().shape().rank());
template <class X>
using like = decltype(std::declval<const X&>().like());
template <class X>
using numerator = decltype(std::declval<const X&>().numerator());
template <class X>
using join = decltype(std::declval<const X&>().join());
template <class X>
using indices = decltype(std::declval<const X&>().indices());
template <class X>
using args = decltype(std::declval<const X&>().args());
template <class X>
using lhs = decltype(std::declval<const X&>().lhs());
template <class X>
using arg = decltype(std::declval<const X&>().arg());
template <class X>
using keeps_dims = decltype(std::declval<const X&>().keeps_dims());
template <class X>
using reverses = decltype(std::declval<const X&>().reverses());
template <class X>
using extent = decltype(std::declval<const X&>().extent(0));
template <class X>
using slice_count = decltype(std::declval<const X&>().slice_count());
template <class X>
using axis1 = decltype(std::declval<const X&>().axis1());
template <class X>
using spec = decltype(std::declval<const X&>().spec());
template <class X>
using operation = typename X::operation;
}  // namespace member

}  // namespace fusor::detail
