// fusor/grad/parts.hpp — what reverse mode carries from a node to its
// operands: a contribution to an adjoint, and what is statically known about
// its shape.
//
// The adjoint of a node has the node's shape. Elementwise rules do not need
// it to: multiplying by a local derivative (which has at most the node's
// shape) commutes with summing over broadcast axes, so a contribution may
// stay *larger* than its node (axes a broadcast added, not yet summed) or
// *smaller* (axes it will broadcast along) until a node that needs the exact
// shape — a dot, a transpose, a reshape, a reduction, the target itself, or
// another path's contribution to the same target (two contributions of
// different shapes cannot be added before they are summed: the narrower one
// would be counted once per element of the wider one's extra axes).
// There `conform` sums it to the node's shape (a sum_to reduction, its axes
// decided from the plan's shapes), reads it at the node's shape when it can
// only be smaller (a broadcast: elementwise, no reduction), or costs nothing
// when the contribution is known to be exact already.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"

namespace fusor::detail::ad {

/// No contribution (known at compile time: no path to the target).
struct none {};

/// A contribution: `e`, whose sum to the node's shape is the node's adjoint.
/// Larger: it may have axes or extents beyond the node's; Smaller: it may lack
/// some (it broadcasts up). Neither: exactly the node's shape.
///
/// A wrapper, its members folded into their callers (core/config.hpp): an
/// unoptimised build compiled a copy, a move and a destructor per
/// contribution's type, each only passing the call on to `e`'s.
template <class E, bool Larger, bool Smaller>
struct part {
  E e;

  FUSOR_PLUMBING part(E&& x) : e(FUSOR_MOVE(x)) {}  // `return {e};` too
  FUSOR_PLUMBING part(const part&) = default;
  FUSOR_PLUMBING part(part&&) = default;
  FUSOR_PLUMBING part& operator=(const part&) = default;
  FUSOR_PLUMBING part& operator=(part&&) = default;
  FUSOR_PLUMBING ~part() = default;
};

template <class P>
inline constexpr bool is_part_v = false;
template <class E, bool L, bool S>
inline constexpr bool is_part_v<part<E, L, S>> = true;
/// Whether a contribution may be larger than its node (not summed yet).
template <class P>
inline constexpr bool is_larger_v = false;
template <class E, bool S>
inline constexpr bool is_larger_v<part<E, true, S>> = true;

/// How many of P... are parts, and whether one of them may be larger than
/// its node: counted over an array, not by a fold expression, which clang
/// stops at 256 operands (the occurrences of one cut point of a second
/// derivative run to hundreds).
template <class... P>
inline constexpr std::size_t part_count_v = [] {
  constexpr bool is_part[] = {is_part_v<P>..., false};
  std::size_t n = 0;
  for (const bool b : is_part) n += b ? 1 : 0;
  return n;
}();
template <class... P>
inline constexpr bool any_larger_v = [] {
  constexpr bool larger[] = {is_larger_v<P>..., false};
  for (const bool b : larger)
    if (b) return true;
  return false;
}();

template <bool L, bool S, class E>
FUSOR_FOLDED part<E, L, S> make_part(E e) {
  return part<E, L, S>(FUSOR_MOVE(e));
}

inline none add(none, none) { return {}; }
template <class E, bool L, bool S>
part<E, L, S> add(part<E, L, S> p, none) {
  return p;
}
template <class E, bool L, bool S>
part<E, L, S> add(none, part<E, L, S> p) {
  return p;
}
/// Two contributions to one node: an exact one makes a smaller one exact too,
/// unless it may be a closed gate (may_be_closed_gate, expr/elementwise.hpp):
/// a rank-R zero of shape (1, ..., 1), whatever its flags say. A sum of such
/// contributions is exact when one gate is open (the target was found), but
/// it does not make a smaller contribution exact. Neither may be larger than the node
/// (grad/reverse.hpp's walker sums a larger one first): sum_to(a + b) would
/// count b once per element of a's extra axes.
template <class E1, bool L1, bool S1, class E2, bool L2, bool S2>
auto add(part<E1, L1, S1> a, part<E2, L2, S2> b) {
  constexpr bool c1 = may_be_closed_gate<E1>, c2 = may_be_closed_gate<E2>;
  return make_part<L1 || L2, (S1 && S2) || (S1 && c2) || (c1 && S2)>(FUSOR_MOVE(a.e) + FUSOR_MOVE(b.e));
}

/// g read at like's shape (broadcast against zeros of it, which read nothing).
template <class R, class G, class L>
auto read_at_shape_of(G g, const L& like) {
  auto z = zeros_of<R>(ref(like));
  return map_t<fn::broadcast_first, R, type_list<R, R>, G, decltype(z)>(FUSOR_MOVE(g), FUSOR_MOVE(z));
}

/// The contribution as a value of exactly `node`'s shape. One that can only
/// be smaller (no axis or extent beyond the node's, of no higher rank) is
/// broadcast to it: a sum_to there would compile a whole reduction kernel
/// for a plan step that only copies (the seed's 1 / n of a mean, read at
/// the shape of the sum inside it).
template <class N, class E, bool L, bool S>
auto conform(const part<E, L, S>& p, const N& node) {
  if constexpr (!L && !S) return p.e;
  else if constexpr (!L && E::rank <= N::rank) return read_at_shape_of<value_type_t<E>>(p.e, node);
  else return sum_to(p.e, ref(node));
}


}  // namespace fusor::detail::ad
