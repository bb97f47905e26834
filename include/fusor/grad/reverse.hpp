// fusor/grad/reverse.hpp — reverse mode over an expression type:
// fusor::grad(cost, w, ...).
//
//   auto cost = mean(-y * log(p) - (1 - y) * log(1 - p)) + 0.01 * sum(w * w);
//   auto [gw, gb] = fusor::grad(cost, w, b);      // two expressions
//   auto train = fusor::function(fusor::inputs(x, y), fusor::outputs(cost),
//                                fusor::updates(fusor::update(w, w - 0.1 * gw),
//                                               fusor::update(b, b - 0.1 * gb)));
//
// The gradient of an expression type is another expression type, built once
// when grad is called: it prints, fuses, can be an output or an update, and
// can be differentiated again. Its nodes that are the cost's own (p, the dot
// inside it) are the same nodes in a function's graph, so a sub-expression the
// cost and its gradient share is computed once per call.
//
// What is decided when: which nodes lie on a path to the target is a property
// of the types; which leaf *is* the target (two shared variables may have one
// C++ type) is known when grad is called, and recorded in gates
// (expr/shape_like.hpp) around the contributions of every leaf of the
// target's type when the cost has more than one; broadcasting is summed back
// where the plan's shapes say it happened (grad/parts.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/expr/collective.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_like.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/view.hpp"
#include "fusor/expr/visit.hpp"
#include "fusor/grad/parts.hpp"
#include "fusor/grad/rules.hpp"
#include "fusor/grad/structure.hpp"
#include "fusor/rewrite/stable.hpp"
#include "fusor/expr/key.hpp"

namespace fusor {

namespace detail::ad {

template <class T>
inline constexpr bool differentiable_v = std::is_floating_point_v<T>;

/// Whether operand K of a map is certainly of the map's shape: every other
/// operand has rank 0 (a number, a rank-0 variable).
template <std::size_t K, class... A>
constexpr bool fills_map() {
  constexpr int ranks[] = {A::rank...};
  for (std::size_t j = 0; j < sizeof...(A); ++j)
    if (j != K && ranks[j] != 0) return false;
  return true;
}

// ---------------------------------------------------------------- the walk

/// The identity of a sub-expression's value: its leaves, constants and
/// parameters (two sub-expressions of one type are equal when their keys are).
template <class X>
std::vector<std::uint64_t> value_key(const X& e) {
  std::vector<std::uint64_t> key;
  fusor::detail::graph_key(e, key);
  return key;
}

/// A sum of contributions. Up to four are summed left to right; more, as the
/// sum of the two halves, each summed the same way, so that the sum's type is
/// about log2(N) sums deep instead of N. A second derivative through an
/// operation read twice sums hundreds of contributions: nested left to right,
/// they took the graph builder's walk past g++'s template depth of 900 and,
/// unoptimised, this function's own recursion past a thread's 8 MB of stack
/// (each level a frame holding every contribution still to come).
template <class P0>
auto sum_parts(P0 p0) {
  return p0;
}
template <std::size_t From, class T, std::size_t... K>
auto sum_range(T& all, std::index_sequence<K...>);
template <class P0, class P1, class... P>
auto sum_parts(P0 p0, P1 p1, P... rest) {
  constexpr std::size_t n = 2 + sizeof...(P);
  if constexpr (n <= 4) {
    return sum_parts(add(FUSOR_MOVE(p0), FUSOR_MOVE(p1)), FUSOR_MOVE(rest)...);
  } else {
    fusor::detail::operand_tuple<P0, P1, P...> all(FUSOR_MOVE(p0), FUSOR_MOVE(p1), FUSOR_MOVE(rest)...);
    constexpr std::size_t half = (n + 1) / 2;
    return add(sum_range<0>(all, std::make_index_sequence<half>{}),
               sum_range<half>(all, std::make_index_sequence<n - half>{}));
  }
}
/// Contributions From, From + 1, ... of `all`, summed.
template <std::size_t From, class T, std::size_t... K>
auto sum_range(T& all, std::index_sequence<K...>) {
  return sum_parts(FUSOR_MOVE(fusor::detail::get<From + K>(all))...);
}

/// Where a cut point's type occurs in the cost (grad/structure.hpp), in
/// pre-order: each occurrence, its value's key, whether it lies below a
/// closed gate, and whether it is the first open occurrence of its value. The
/// adjoint of a cut point is summed per value: into the first open
/// occurrence of that value, from every occurrence equal to it, and the walk
/// goes on below that occurrence only (once). Most cut types have one value
/// (a sub-expression the cost reads several times); equal types over other
/// variables (sum(W1 * W1) + sum(W2 * W2)) have several, told apart when grad
/// is called. Below a closed gate (a second derivative's cost is a gradient,
/// with gates) nothing is read: the adjoint of an occurrence there is all
/// closed gates, zeros of shape (1, ..., 1), and a walk below it that was not
/// muted would hand that zero to operations that need its shape (found by
/// the differential tests: the second derivative of
/// mean(dot(concatenate((w1, w1), 0), w0)) for w0 was refused as not aligned).
template <class S, std::size_t M>
struct cut_sites {
  static constexpr std::size_t size = M;
  std::array<const S*, M> at{};
  std::array<std::vector<std::uint64_t>, M> key{};
  std::array<bool, M> open{};
  std::array<bool, M> first{};
};

/// The reverse walk towards the occurrences of one target: a leaf (a shared
/// variable or an input), or one value of a cut point (its first occurrence,
/// whose adjoint is being summed). Every occurrence of the target's type that
/// is not the target (another variable, another value) contributes a closed
/// gate: Gated says whether the cost leaves that in doubt at all.
///
/// Every walk stops at the cut points (Cuts): their adjoints are summed
/// separately, and walked below once each (`below`). So each segment of the
/// cost between cut points is walked once per target inside it, not once per
/// path from the cost down. A walk below an occurrence that is not the first
/// of its value, or below a closed gate, is *muted*: what it contributes is
/// closed by gates (the types must not depend on those run-time facts).
template <class W, bool Gated, class Cuts>
class walker {
 public:
  /// `muted`: the target itself is not the first occurrence of its value
  /// (a cut point's later occurrence): all it collects is closed.
  walker(const W& target, std::vector<std::uint64_t> key, bool muted = false)
      : target_(target), target_key_(FUSOR_MOVE(key)), base_muted_(muted), muted_(muted) {}

  bool found() const noexcept { return found_; }

  /// Contributions to the target from several paths, summed. One that may
  /// be larger than the target (axes or extents the target lacks, not summed
  /// yet) is summed to the target's shape before it meets another: summed
  /// after, the other would be counted once per element of those extra axes.
  /// (Found by the differential tests: the gradient of sum(w * m) + sum(w),
  /// m of shape (3, 2), counted the second term three times.)
  template <class... P>
  auto sum_paths(P... p) {
    if constexpr (part_count_v<P...> > 1 && any_larger_v<P...>)
      return sum_parts(settled(FUSOR_MOVE(p))...);
    else
      return sum_parts(FUSOR_MOVE(p)...);
  }

  /// The target's gradient from node `e`, whose adjoint contribution is `adj`:
  /// none, or a part.
  template <class X, class P>
  auto back(const X& e, const P& adj) {
    if constexpr (!is_part_v<P> || !reaches_direct_v<X, W, Cuts>) return none{};
    else if constexpr (std::is_same_v<X, W>) return at_target(e, shared(adj));
    else return back_node(e, shared(adj));
  }

  /// The target's gradient from below the occurrences of one cut point, given
  /// the adjoints of their values (`adjoints[j]` is summed into occurrence j
  /// when it is the first of its value; else it is closed).
  template <class S, std::size_t M, class A>
  auto below(const cut_sites<S, M>& sites, const std::array<A, M>& adjoints) {
    if constexpr (!is_part_v<A> || !reaches_below<S, W, Cuts>::value) {
      return none{};
    } else {
      return [&]<std::size_t... J>(std::index_sequence<J...>) {
        return sum_paths(from(*sites.at[J], adjoints[J], sites.first[J])...);
      }(std::make_index_sequence<M>{});
    }
  }

 private:
  /// A contribution summed to the target's shape where it may be larger.
  /// Where it may be a closed gate (a rank-0 zero), it is read at the
  /// target's shape (broadcast_to zeros of it, which reads nothing): exact
  /// either way, so a cut point's adjoint made of it needs no second sum.
  template <class P>
  auto settled(P p) const {
    if constexpr (is_larger_v<P>) {
      auto e = settle(p.e);
      if constexpr (may_be_closed_gate<decltype(e)>) {
        return make_part<false, false>(read_at_shape_of<value_type_t<decltype(e)>>(FUSOR_MOVE(e), target_));
      } else {
        return make_part<false, false>(FUSOR_MOVE(e));
      }
    } else {
      return p;
    }
  }
  /// e summed to the target's shape, inside its gates: a closed gate stays a
  /// zero that reads nothing (summed outside, it would be a reduction of zeros).
  template <class E>
  auto settle(const E& e) const {
    if constexpr (is_ref_v<E> && may_be_closed_gate<E>) return settle(e.target());
    else if constexpr (is_gate_v<E>) return gated(settle(e.arg()), e.on());
    else if constexpr (may_be_closed_gate<E>)  // a sum of gates
      return settle(detail::get<0>(e.args())) + settle(detail::get<1>(e.args()));
    else return sum_to(e, ref(target_));
  }

  template <class X, class P>
  auto from(const X& e, const P& adj, bool first) {
    muted_ = base_muted_ || !first;
    auto r = back_node(e, shared(adj));
    muted_ = base_muted_;
    return r;
  }

  /// The adjoint held by reference: every local derivative below reads it,
  /// and by value each would copy it (expr/ref.hpp).
  template <class E, bool L, bool S>
  static auto shared(const part<E, L, S>& p) {
    return make_part<L, S>(ref(p.e));
  }

  template <class X, class P>
  auto at_target(const X& e, const P& adj) {
    const bool on = !muted_ && value_key(e) == target_key_;
    if (on) found_ = true;
    if constexpr (Gated) return gate_part(adj, on);
    else return adj;
  }

  // ------------------------------------------------------------ elementwise

  template <class F, class S, class... A, class P>
  auto back_node(const map_node<F, S, A...>& e, const P& adj) {
    if constexpr (!differentiable_v<typename map_node<F, S, A...>::value_type>) {
      return none{};
    } else if constexpr (!rule<F>::has) {
      refuse_inside(e, "an elementwise function without a derivative rule (" + std::string(F::symbol) + ")");
      return none{};
    } else {
      return map_operands(e, adj, std::index_sequence_for<A...>{});
    }
  }
  template <class F, class S, class... A, class P, std::size_t... K>
  auto map_operands(const map_node<F, S, A...>& e, const P& adj, std::index_sequence<K...>) {
    return sum_paths(map_operand<K>(e, adj)...);
  }
  template <std::size_t K, class F, class Sig, class... A, class E, bool L, bool S>
  auto map_operand(const map_node<F, Sig, A...>& e, const part<E, L, S>& adj) {
    using AK = std::tuple_element_t<K, std::tuple<A...>>;
    using R = typename map_node<F, Sig, A...>::value_type;
    using Casts = typename map_node<F, Sig, A...>::casts;
    using CK = cast_at_t<K, Casts>;
    if constexpr (!reaches_direct_v<AK, W, Cuts> || !differentiable_v<value_type_t<AK>> || !differentiable_v<CK> ||
                  !rule<F>::template has_operand<K>) {
      return none{};
    } else {
      constexpr bool fills = fills_map<K, A...>();
      // An adjoint that may be smaller than this node, met where operand K
      // may be broadcast: read at the node's shape first (it is the node's
      // shape, broadcasting included, that is summed back below).
      auto g = [&] {
        if constexpr (S && !fills) {
          return read_at_shape_of<R>(adj.e, e);
        } else {
          return adj.e;
        }
      }();
      auto local = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return rule<F>::template partial<K>(g, ref(e), as_dtype<cast_at_t<J, Casts>>(ref(detail::get<J>(e.args())))...);
      }(std::index_sequence_for<A...>{});
      return back(detail::get<K>(e.args()),
                  make_part<L || !fills, S && fills>(as_dtype<value_type_t<AK>>(FUSOR_MOVE(local))));
    }
  }

  template <element T, class A, class E, bool L, bool S>
  auto back_node(const cast_node<T, A>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<T> || !differentiable_v<value_type_t<A>>) return none{};
    else return back(e.arg(), make_part<L, S>(as_dtype<value_type_t<A>>(adj.e)));
  }

  // ------------------------------------------------------------ reductions

  /// Reduction Op of `operand` over e's axes, keeping them (length 1).
  template <class Op, class E, class X>
  static auto kept(const E& e, X operand) {
    return reduce_node<Op, X, X::rank>(FUSOR_MOVE(operand), e.axes(), e.axis_count(), true);
  }
  /// A value of reduction e's shape, with the reduced axes put back (length 1):
  /// reshaped like a keepdims sum of e's operand, whose shape alone is read.
  template <class Op, class A, int R, class G>
  static auto expand(const reduce_node<Op, A, R>& e, const G& g) {
    if constexpr (R == 0) return g;  // rank 0 broadcasts everywhere
    else return reshape_like(g, kept<red::sum>(e, ref(e.arg())));
  }

  template <class Op, class A, int R, class E, bool L, bool S>
  auto back_node(const reduce_node<Op, A, R>& e, const part<E, L, S>& adj) {
    using V = value_type_t<A>;
    if constexpr (!differentiable_v<value_type_t<reduce_node<Op, A, R>>> || !differentiable_v<V>) {
      return none{};
    } else {
      // A rank-0 adjoint (a mean's or sum's seed) is uniform: it broadcasts
      // to the operand as it is, with no copy at the reduction's shape.
      const auto gx = [&] {
        if constexpr (E::rank == 0) return adj.e;
        else return expand(e, conform(adj, e));
      }();
      const auto x = ref(e.arg());
      if constexpr (std::is_same_v<Op, red::sum>) {
        return back(x, make_part<false, true>(gx));
      } else if constexpr (std::is_same_v<Op, red::mean>) {
        return back(x, make_part<false, true>(gx * size_ratio<V>(e, x)));
      } else if constexpr (std::is_same_v<Op, red::nansum>) {
        return back(x, make_part<false, false>(where(x == x, gx, 0)));  // a NaN counted as zero gets none
      } else if constexpr (std::is_same_v<Op, red::nanmean>) {
        const auto numbers = kept<red::sum>(e, cast<V>(x == x));
        return back(x, make_part<false, false>(where(x == x, gx / numbers, 0)));
      } else if constexpr (std::is_same_v<Op, red::max> || std::is_same_v<Op, red::min> ||
                           std::is_same_v<Op, red::nanmax> || std::is_same_v<Op, red::nanmin>) {
        // The gradient goes to the elements equal to the result, shared
        // equally among ties (a NaN equals nothing: the nan- forms skip it).
        const auto m = expand(e, ref(e));
        const auto ties = kept<red::sum>(e, cast<V>(x == m));
        return back(x, make_part<false, false>(where(x == m, gx / ties, 0)));
      } else if constexpr (std::is_same_v<Op, red::prod>) {
        // The product of the other elements, without dividing by zero, in a
        // form whose own derivative is right too (the grad of a gradient) and
        // finite (no branch that is not taken computes 0 / 0: its gradient
        // would be NaN). With y = x where x != 0 and 1 where x = 0, P the
        // product of y over the slice, m the zeros among the *other* elements
        // and S the sum of those zeros (the value 0, its derivative 1 at each
        // of them):  others = P / y * (m = 0 ? 1 : m = 1 ? S : 0).
        // For m = 1 the value is 0 and its derivative with respect to that
        // zero P / y, as for the true product; for m > 1 every derivative of
        // the true product is 0 at such a point.
        const auto is_zero = x == 0;
        const auto y = where(is_zero, 1, x);
        const auto nonzero = kept<red::prod>(e, y);
        const auto other_zeros = kept<red::sum>(e, cast<V>(is_zero)) - cast<V>(is_zero);
        const auto other_zero_sum = kept<red::sum>(e, where(is_zero, x, 0)) - where(is_zero, x, 0);
        const auto others = nonzero / y * where(other_zeros == 0, 1, where(other_zeros == 1, other_zero_sum, 0));
        return back(x, make_part<false, false>(gx * others));
      } else {
        refuse_inside(e, std::string("the reduction ") + Op::name + " (fusor::grad differentiates sum, mean, prod, "
                                                                 "max, min and their NaN-ignoring forms)");
        return none{};
      }
    }
  }

  // ------------------------------------------------------------ dot, transpose, reshape

  template <class A, class B, class E, bool L, bool S>
  auto back_node(const dot_node<A, B>& e, const part<E, L, S>& adj) {
    using V = value_type_t<dot_node<A, B>>;
    if constexpr (!differentiable_v<V>) {
      return none{};
    } else {
      static_assert(A::rank != dynamic_rank && B::rank != dynamic_rank,
                    "fusor::grad: a dot of operands of dynamic rank is not differentiated; give them a static rank");
      const auto g = conform(adj, e);
      const auto a = as_dtype<V>(ref(e.lhs()));
      const auto b = as_dtype<V>(ref(e.rhs()));
      auto to_a = [&](auto c) { return make_part<false, false>(as_dtype<value_type_t<A>>(FUSOR_MOVE(c))); };
      auto to_b = [&](auto c) { return make_part<false, false>(as_dtype<value_type_t<B>>(FUSOR_MOVE(c))); };
      if constexpr (A::rank == 1 && B::rank == 1) {  // a . b
        return sum_paths(back_if(e.lhs(), [&] { return to_a(g * b); }), back_if(e.rhs(), [&] { return to_b(g * a); }));
      } else if constexpr (A::rank == 2 && B::rank == 1) {  // (m, k) . (k,) -> (m,)
        return sum_paths(back_if(e.lhs(), [&] { return to_a(reshape_like(g, column_like(ref(e.lhs()))) * b); }),
                         back_if(e.rhs(), [&] { return to_b(dot(transpose(a), g)); }));
      } else if constexpr (A::rank == 1 && B::rank == 2) {  // (k,) . (k, n) -> (n,)
        return sum_paths(back_if(e.lhs(), [&] { return to_a(dot(b, g)); }),
                         back_if(e.rhs(), [&] { return to_b(reshape_like(a, column_like(ref(e.rhs()))) * g); }));
      } else {  // (m, k) . (k, n) -> (m, n)
        return sum_paths(back_if(e.lhs(), [&] { return to_a(dot(g, transpose(b))); }),
                         back_if(e.rhs(), [&] { return to_b(dot(transpose(a), g)); }));
      }
    }
  }
  /// A stand-in of shape (rows, 1) for a matrix m: only its shape is read.
  template <class M>
  static auto column_like(const M& m) {
    return reduce_node<red::sum, M, 2>(m, {1}, 1, true);
  }
  /// back(operand, contribution()) when the operand reaches the target; the
  /// contribution is not even built otherwise.
  template <class X, class Make>
  auto back_if(const X& operand, Make make) {
    if constexpr (!reaches_direct_v<X, W, Cuts> || !differentiable_v<value_type_t<X>>) return none{};
    else return back(operand, make());
  }

  template <class A, class E, bool L, bool S>
  auto back_node(const transpose_node<A>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) {
      return none{};
    } else {
      auto g = conform(adj, e);
      using G = decltype(g);
      if (e.reverses()) return back(e.arg(), make_part<false, false>(transpose_node<G>(FUSOR_MOVE(g), {}, 0)));
      std::array<int, max_rank> inverse{};
      const int r = e.count();
      for (int i = 0; i < r; ++i) {
        const int p = e.perm(i) < 0 ? e.perm(i) + r : e.perm(i);
        if (p < 0 || p >= r)
          throw shape_error("fusor::grad: " + e.str() + ": axis " + std::to_string(e.perm(i)) + " is out of bounds");
        inverse[static_cast<std::size_t>(p)] = i;
      }
      return back(e.arg(), make_part<false, false>(transpose_node<G>(FUSOR_MOVE(g), inverse, r)));
    }
  }

  template <class A, int N, class E, bool L, bool S>
  auto back_node(const reshape_node<A, N>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) return none{};
    else return back(e.arg(), make_part<false, false>(reshape_like(conform(adj, e), ref(e.arg()))));
  }
  template <class G, class Like, class E, bool L, bool S>
  auto back_node(const reshape_like_node<G, Like>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<G>>) return none{};
    else return back(e.arg(), make_part<false, false>(reshape_like(conform(adj, e), ref(e.arg()))));
  }
  template <class A, class E, bool L, bool S>
  auto back_node(const specify_node<A>& e, const part<E, L, S>& adj) {
    return back(e.arg(), adj);
  }
  /// A collective over processes (expr/collective.hpp): each process's cost
  /// reads the combined value, and the cost differentiated is the sum of the
  /// processes' costs, so the adjoint is combined the same way (a sum's
  /// adjoint is the sum of the adjoints, a mean's their mean); an operation
  /// without a gradient (max, min) refuses here, when grad is called.
  template <class A, class E, bool L, bool S>
  auto back_node(const collective_node<A>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) {
      return none{};
    } else {
      auto g = conform(adj, e);
      using G = decltype(g);
      return back(e.arg(), make_part<false, false>(collective_node<G>(FUSOR_MOVE(g), e.op().adjoint())));
    }
  }
  template <class X, class P>
  auto back_node(const ref_node<X>& e, const P& adj) {
    return back(e.target(), adj);  // a reference is its target
  }

  // ------------------------------------------------------------ a gradient's own nodes (second derivatives)

  /// sum_to is linear: its operand's adjoint is the node's adjoint broadcast
  /// back. A contribution that may be larger than the node is summed to the
  /// node's shape first (conform): passed on as it is, its extra extents
  /// would be read as the operand's own elements — the second derivative of
  /// sum(w * min(w)) lost its cross terms so (found by the differential
  /// tests). Exact at the node's shape, it is smaller than the operand.
  template <class G, class Like, class E, bool L, bool S>
  auto back_node(const sum_to_node<G, Like>& e, const part<E, L, S>& adj) {
    return back(e.arg(), make_part<false, true>(conform(adj, e)));
  }
  /// Below a closed gate nothing is the target's: the walk goes on (the
  /// types must agree) muted, and its result is closed by the same gate.
  template <class C, class P>
  auto back_node(const gate_node<C>& e, const P& adj) {
    const bool was = muted_;
    muted_ = muted_ || !e.on();
    auto r = back(e.arg(), adj);
    muted_ = was;
    if constexpr (is_part_v<decltype(r)>) return gate_part(FUSOR_MOVE(r), e.on());
    else return r;
  }
  template <class E, bool L, bool S>
  static auto gate_part(part<E, L, S> p, bool on) {
    return make_part<L, S>(gated(FUSOR_MOVE(p.e), on));
  }

  // ------------------------------------------------------------ selections: the adjoint put back (expr/place.hpp)

  template <class A, int N, class E, bool L, bool S>
  auto back_node(const view_node<A, N>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) return none{};
    else return back(e.arg(), make_part<false, false>(place(conform(adj, e), e)));
  }
  template <class A, class E, bool L, bool S>
  auto back_node(const diagonal_node<A>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) return none{};
    else return back(e.arg(), make_part<false, false>(place(conform(adj, e), e)));
  }
  /// take: the adjoint's slabs added at the rows the indices name (the
  /// indices themselves have no gradient).
  template <class A, class I, int N, class E, bool L, bool S>
  auto back_node(const take_node<A, I, N>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<A>>) return none{};
    else return back(e.arg(), make_part<false, false>(place(conform(adj, e), e)));
  }
  /// A join: each part's adjoint is the piece of the join's adjoint it was
  /// moved to. An edge pad copies its edges into the border (several result
  /// elements from one operand element, which moves cannot sum): refused.
  template <int N, class... A, class E, bool L, bool S>
  auto back_node(const join_node<N, A...>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<join_node<N, A...>>>) {
      return none{};
    } else {
      const auto g = conform(adj, e);
      // The target below an edge pad is refused, on a muted walk too (a later
      // occurrence of a shared value: its place would still reach the plan,
      // which has no step for it — found by the differential tests);
      // another variable of its type there contributes through a closed
      // gate, so the edge pad's place never enters a graph.
      if (e.join().kind == join_kind::pad_edge) refuse_inside(e, "an edge pad (pad(..., fusor::edge))", true);
      return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        return sum_paths(join_part<K>(e, g)...);
      }(std::index_sequence_for<A...>{});
    }
  }
  template <std::size_t K, int N, class... A, class G>
  auto join_part(const join_node<N, A...>& e, const G& g) {
    using AK = std::tuple_element_t<K, std::tuple<A...>>;
    if constexpr (!reaches_direct_v<AK, W, Cuts>) return none{};
    else return back(detail::get<K>(e.args()), make_part<false, false>(place<K>(g, e)));
  }

  /// A place is linear in its adjoint operand: the adjoint of that operand is
  /// the selection again, applied to this adjoint (second derivatives).
  template <class G, class F, std::size_t K, class E, bool L, bool S>
  auto back_node(const place_node<G, F, K>& e, const part<E, L, S>& adj) {
    if constexpr (!differentiable_v<value_type_t<G>>) {
      return none{};
    } else {
      auto a = conform(adj, e);
      using X = decltype(a);
      const auto& f = e.forward();
      using Fw = std::remove_cvref_t<decltype(f)>;
      if constexpr (detail::has<detail::member::spec, Fw>) {
        return back(e.arg(), make_part<false, false>(view_node<X, G::rank>(FUSOR_MOVE(a), f.spec())));
      } else if constexpr (detail::has<detail::member::axis1, Fw>) {
        return back(e.arg(), make_part<false, false>(diagonal_node<X>(FUSOR_MOVE(a), f.offset(), f.axis1(), f.axis2())));
      } else if constexpr (detail::has<detail::member::indices, Fw>) {
        return back(e.arg(), make_part<false, false>(take_node<X, std::remove_cvref_t<decltype(f.indices())>, G::rank>(
                                                         FUSOR_MOVE(a), f.indices(), f.axis())));
      } else {
        // Part K of a join: the join again, with zeros for the other parts
        // (and a zero fill for a constant pad).
        using V = value_type_t<G>;
        join_params p = f.join();
        p.fill = 0;
        const auto part_of = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
          if constexpr (J == K) return a;
          else return zeros_of<V>(ref(detail::get<J>(f.args())));
        };
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
          using Join = join_node<Fw::rank,
                                 decltype(part_of(std::integral_constant<std::size_t, J>{}))...>;
          return back(e.arg(), make_part<false, false>(Join(p, part_of(std::integral_constant<std::size_t, J>{})...)));
        }(std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(f.args())>>>{});
      }
    }
  }

  /// The target below a node grad cannot differentiate: a clear error (a
  /// leaf of the target's type that is another variable is fine).
  template <class X>
  void refuse_inside(const X& e, const std::string& what, bool even_muted = false) const {
    // Only a leaf target can be read through a node without a derivative; a
    // cut point's walk (W a sub-expression) meets the same node with the
    // leaf's walk, which reports it. (Nor is W's text built for those walks.)
    if constexpr (std::is_same_v<typename children_of<W>::type, tlist<>>) {
      if (muted_ && !even_muted) return;
      bool inside = false;
      visit_leaves(e, [&](const auto& leaf) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, W>)
          inside = inside || value_key(leaf) == target_key_;
      });
      if (inside)
        throw value_error("fusor::grad: " + target_.str() + " is read through " + what + " in " + e.str() +
                          ", which fusor::grad does not differentiate");
    } else if (even_muted) {
      // A node whose adjoint no step can compute (an edge pad) over a cut
      // point: the leaf's walk stops at the cut point and never meets it, so
      // it is refused here, when a leaf of the cut point's value is below it.
      // (Found by the differential tests: the adjoint reached the planner.)
      std::vector<std::vector<std::uint64_t>> keys;
      visit_leaves(target_, [&](const auto& leaf) { keys.push_back(value_key(leaf)); });
      bool inside = false;
      visit_leaves(e, [&](const auto& leaf) {
        const auto k = value_key(leaf);
        for (const auto& t : keys) inside = inside || t == k;
      });
      if (inside)
        throw value_error("fusor::grad: " + target_.str() + " is read through " + what + " in " + e.str() +
                          ", which fusor::grad does not differentiate");
    }
  }

  const W& target_;
  std::vector<std::uint64_t> target_key_;
  bool base_muted_ = false;
  bool muted_ = false;
  bool found_ = false;
};

/// The leaf type of a target: a shared variable's leaf, or an input.
template <class T>
auto target_leaf(const T& t) {
  if constexpr (is_shared_v<T>) return shared_leaf<typename T::value_type>(t);
  else return t;
}

/// The sites of the cut types that CutInfo (a cuts_of) chose: a type only.
template <class CutInfo, std::size_t... K>
detail::operand_tuple<cut_sites<tlist_at_t<K, typename CutInfo::type>, CutInfo::template live_count<K>>...>
    sites_type_of(std::index_sequence<K...>);

/// Records each occurrence of a cut type that visit_live_nodes meets in its
/// site. A class named by the cost and the targets' leaves (Leaves, a tlist),
/// not a lambda: visit_live_nodes is one function per node type of the cost,
/// each named by its visitor, and a lambda is named by its enclosing
/// function, whose cuts_of spells the cost's every node type.
template <class Cost, class Leaves>
struct site_recorder {
  using cut_info = cuts_of<Cost, Leaves>;
  using cuts = typename cut_info::type;
  using sites_type = decltype(sites_type_of<cut_info>(std::make_index_sequence<cuts::size>{}));
  sites_type& sites;
  std::array<std::size_t, cuts::size + 1>& filled;

  template <class N>
  void operator()(const N& node, bool open) const {
    constexpr int i = index_in<N, cuts>::value;
    if constexpr (i >= 0) {
      auto& site = detail::get<static_cast<std::size_t>(i)>(sites);
      std::size_t& k = filled[static_cast<std::size_t>(i)];
      if (k < site.at.size()) {
        site.at[k] = &node;
        site.open[k] = open;
      }
      ++k;
    }
  }
};

/// The occurrences of every cut type in `cost` that an adjoint can reach, in
/// pre-order (cut_sites), for the targets' leaf types Leaves (a tlist).
template <class Cost, class Leaves>
auto sites_of(const Cost& cost) {
  using recorder = site_recorder<Cost, Leaves>;
  typename recorder::sites_type sites;
  std::array<std::size_t, recorder::cuts::size + 1> filled{};
  visit_live_nodes(cost, recorder{sites, filled});
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&](auto& site, std::size_t count) {
          // visit_live_nodes and cuts_of must see the same tree
          if (count != site.at.size())
            throw std::logic_error("fusor::grad: a cut point's occurrences were miscounted");
          for (std::size_t k = 0; k < site.at.size(); ++k) {
            site.key[k] = value_key(*site.at[k]);
            site.first[k] = site.open[k];
            for (std::size_t e = 0; e < k && site.first[k]; ++e)
              site.first[k] = !site.open[e] || site.key[e] != site.key[k];
          }
        }(detail::get<I>(sites), filled[I]),
        ...);
  }(std::make_index_sequence<recorder::cuts::size>{});
  return sites;
}

/// The adjoint of the value of cut point I whose first occurrence is
/// occurrence J: summed from the cost, and from below every cut before it (a
/// cut containing it comes first), whose adjoints `before` holds.
template <std::size_t I, class Cuts, class Cost, class Sites, class Seed, class... Before>
auto cut_adjoint(const Cost& cost, const Sites& sites, const Seed& seed, std::size_t j, const Before&... before) {
  const auto& site = detail::get<I>(sites);
  using S = std::remove_cvref_t<decltype(*site.at[0])>;
  walker<S, true, Cuts> walk(*site.at[j], site.key[j], !site.first[j]);
  auto from_cost = walk.back(cost, seed);
  return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
    return walk.sum_paths(FUSOR_MOVE(from_cost), walk.below(detail::get<K>(sites), before)...);
  }(std::index_sequence_for<Before...>{});
}

template <std::size_t I, class Cost, class Leaves>
struct adjoint_of;
template <std::size_t I, class Cost, class Leaves>
struct adjoint_types;

/// A cut point's adjoint held by a reference spelled by its name (adjoint_of):
/// the contributions below the cut point, and so the gradients, are named by
/// the name, not by the adjoint's type.
template <class Name>
none named_part(none) {
  return {};
}
template <class Name, class E, bool L, bool S>
part<ref_node<Name>, L, S> named_part(part<E, L, S> p) {
  return {ref_node<Name>(FUSOR_MOVE(p.e))};
}
template <class Name, class P>
using named_part_t = decltype(named_part<Name>(std::declval<P>()));

/// Cut point I's adjoint at occurrence j, under its name: a call of its own
/// per occurrence, so that one adjoint's expression is on the stack at a
/// time. (Written inside the braced list of every occurrence's adjoint, each
/// expression was a temporary of that list, alive until the whole list was
/// built: 5.7 MB of one frame for a second derivative through an operation
/// read twice, at -O0, past a thread's 8 MB with the rest of the walk.)
template <class Name, std::size_t I, class Cuts, class Cost, class Sites, class Seed, class... Before>
auto named_cut_adjoint(const Cost& cost, const Sites& sites, const Seed& seed, std::size_t j,
                       const Before&... before) {
  return named_part<Name>(cut_adjoint<I, Cuts>(cost, sites, seed, j, before...));
}

/// The adjoints of every cut point, in order, one array per cut point (an
/// entry per occurrence; only the first occurrence of each value is open),
/// each held under its name (adjoint_of<I, Cost, Leaves>, Leaves the targets'
/// leaf types). The ones computed so far are passed on as a pack: one tuple
/// is built at the end, not one per cut point (an operand_tuple, not a
/// std::tuple: core/operand_tuple.hpp says why).
template <class Cuts, class Leaves, class Cost, class Sites, class Seed, class... Before>
auto cut_adjoints(const Cost& cost, const Sites& sites, const Seed& seed, Before... before) {
  constexpr std::size_t I = sizeof...(Before);
  if constexpr (I == Cuts::size) {
    return detail::operand_tuple<Before...>(FUSOR_MOVE(before)...);
  } else {
    constexpr std::size_t M = std::tuple_element_t<I, Sites>::size;
    using name = adjoint_of<I, Cost, Leaves>;
    // The array's type spelled (adjoint_types, below), not deduced:
    // std::array's deduction guide folds over every element, and clang stops
    // a fold at 256 operands (a second derivative through a stack read twice
    // and a pow has 539 occurrences of one cut point).
    auto adj = [&]<std::size_t... J>(std::index_sequence<J...>) {
      return typename adjoint_types<I, Cost, Leaves>::held{
          named_cut_adjoint<name, I, Cuts>(cost, sites, seed, J, before...)...};
    }(std::make_index_sequence<M>{});
    return cut_adjoints<Cuts, Leaves>(cost, sites, seed, FUSOR_MOVE(before)..., FUSOR_MOVE(adj));
  }
}

/// The types grad computes before the cut points' adjoints, for `Cost` and
/// the targets' leaves `W...`: the cut points, their occurrences, the seed.
template <class Cost, class... W>
struct cut_types {
  using C = value_type_t<Cost>;
  using cuts = typename site_recorder<Cost, tlist<W...>>::cuts;
  using sites = typename site_recorder<Cost, tlist<W...>>::sites_type;  // what sites_of returns
  using seed = decltype(make_part<false, false>(cast<C>(constant<C>(C(1)))));
};

/// Cut point I's adjoint, as cut_adjoints computes it from the adjoints of
/// the cut points before it (each under its name), and as it holds it.
template <std::size_t I, class Cost, class Leaves>
struct adjoint_types;
template <std::size_t I, class Cost, class... W>
struct adjoint_types<I, Cost, tlist<W...>> {
  using types = cut_types<Cost, W...>;
  template <std::size_t... K>
  static auto computed(std::index_sequence<K...>)
      -> decltype(cut_adjoint<I, typename types::cuts>(
          std::declval<const Cost&>(), std::declval<const typename types::sites&>(),
          std::declval<const typename types::seed&>(), std::size_t{},
          std::declval<const typename adjoint_types<K, Cost, tlist<W...>>::held&>()...));
  using computed_part = decltype(computed(std::make_index_sequence<I>{}));
  using held = std::array<named_part_t<adjoint_of<I, Cost, tlist<W...>>, computed_part>,
                          std::tuple_element_t<I, typename types::sites>::size>;
};

/// A name for the type of cut point I's adjoint in the gradient of `Cost`
/// with respect to targets whose leaves are `Leaves` (a tlist): the
/// contributions below the cut point read it by a reference spelled by this
/// name, so the gradients' types spell it once, not the adjoint's type once
/// per contribution (gradient_of says why that matters).
template <std::size_t I, class Cost, class Leaves>
struct adjoint_of {
  using named_type = decltype(std::declval<typename adjoint_types<I, Cost, Leaves>::computed_part>().e);
};

/// Whether a target may be differentiated against; a refusal says why. A
/// constexpr function, so that grad_all instantiates it at once, before any
/// walk whose errors would come first and bury it.
template <class Cost, class Target>
constexpr bool check_target() {
  using W = decltype(target_leaf(std::declval<const Target&>()));
  static_assert(differentiable_v<value_type_t<W>>,
                "FUSOR_GRAD_INTEGER_TARGET: fusor::grad differentiates with respect to float or double variables "
                "and inputs only; give the variable a float or double value (an integer one has no gradient, "
                "even through fusor::cast)");
  static_assert(reaches_v<Cost, W>, "FUSOR_GRAD_DISCONNECTED: no leaf of the target's type occurs in the cost");
  return differentiable_v<value_type_t<W>> && reaches_v<Cost, W>;
}

/// One target's gradient: from the cost and from below every cut point.
template <class Cuts, class Cost, class Sites, class Seed, class Adjoints, class Target>
auto target_gradient(const Cost& cost, const Sites& sites, const Seed& seed, const Adjoints& adjoints,
                     const Target& target) {
  using W = decltype(target_leaf(target));
  const W leaf = target_leaf(target);
  constexpr bool gated = occurrences<Cost, W>::value > 1 || Cuts::size > 0;
  walker<W, gated, Cuts> walk(leaf, value_key(leaf));
  auto from_cost = walk.back(cost, seed);
  auto total = [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
    return walk.sum_paths(FUSOR_MOVE(from_cost), walk.below(detail::get<K>(sites), detail::get<K>(adjoints))...);
  }(std::make_index_sequence<Cuts::size>{});
  if (!walk.found())
    throw value_error("fusor::grad: " + leaf.str() + " does not appear in the cost " + cost.str() +
                      " (or only through stop_gradient, an integer or a comparison): its gradient is not defined");
  if constexpr (is_part_v<decltype(total)>) {
    return as_dtype<value_type_t<W>>(conform(total, leaf));
  } else {
    static_assert(is_part_v<decltype(total)>,
                  "FUSOR_GRAD_DISCONNECTED: the target reaches the cost only through operations without a gradient");
  }
}

/// The types grad computes for `Cost` and the targets' leaves `W...`: its cut
/// points, their adjoints and each target's gradient. One place, so that a
/// gradient's name (gradient_of) names the type grad_leaves builds.
template <class Cost, class... W>
struct gradient_types {
  using types = cut_types<Cost, W...>;
  using adjoints = decltype(cut_adjoints<typename types::cuts, tlist<W...>>(
      std::declval<const Cost&>(), std::declval<const typename types::sites&>(),
      std::declval<const typename types::seed&>()));
  template <std::size_t K>
  using gradient = decltype(target_gradient<typename types::cuts>(
      std::declval<const Cost&>(), std::declval<const typename types::sites&>(),
      std::declval<const typename types::seed&>(), std::declval<const adjoints&>(),
      std::declval<const std::tuple_element_t<K, std::tuple<W...>>&>()));
};

}  // namespace detail::ad

/// A name for the type of the gradient of `Cost` with respect to the K-th of
/// the targets whose leaves are `W...`: what grad returns is a reference
/// spelled by this name (ref_node<gradient_of<...>>, expr/ref.hpp), not by
/// the gradient's own type. That type repeats the forward expression once per
/// local derivative (75 KB written out for each weight of a two-layer
/// perceptron); this name spells the cost once. Every type and function over
/// a gradient — the std::tuple grad returns and std::get, an update by the
/// gradient, the function's type — is named by it, in the symbol table and
/// in the debug information. The walks below the reference see the gradient
/// itself.
template <std::size_t K, class Cost, class... W>
struct gradient_of {
  using named_type = typename detail::ad::gradient_types<Cost, W...>::template gradient<K>;
};

namespace detail::ad {

/// The gradients of one cost with respect to the targets' leaves: the cut
/// points of all of them, their adjoints computed once and shared (one node
/// in a function's graph, whichever gradients read it), then one walk per
/// target, each gradient held by a reference under its name (gradient_of).
template <class Cost, class... W>
auto grad_leaves(const Cost& cost, const W&... leaves) {
  using types = cut_types<Cost, W...>;
  using C = typename types::C;
  using cuts = typename types::cuts;
  const auto sites = sites_of<Cost, tlist<W...>>(cost);
  // The seed: d cost / d cost = 1, as a rank-0 value of the cost's dtype
  // (not a weak number: derivatives keep the cost's dtype).
  const auto seed = make_part<false, false>(cast<C>(constant<C>(C(1))));
  const auto adjoints = cut_adjoints<cuts, tlist<W...>>(cost, sites, seed);
  return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
    if constexpr (sizeof...(W) == 1)
      return ref_node<gradient_of<0, Cost, W...>>(target_gradient<cuts>(cost, sites, seed, adjoints, leaves...));
    else
      return std::make_tuple(
          ref_node<gradient_of<K, Cost, W...>>(target_gradient<cuts>(cost, sites, seed, adjoints, leaves))...);
  }(std::index_sequence_for<W...>{});
}

/// The gradients of one cost with respect to several targets, after the
/// checks that each may be differentiated against.
template <class Cost, class... Targets>
auto grad_all(const Cost& cost, const Targets&... targets) {
  using C = value_type_t<Cost>;
  static_assert(differentiable_v<C>, "FUSOR_GRAD_INTEGER_COST: fusor::grad needs a float or double cost");
  static_assert(Cost::rank == 0,
                "FUSOR_GRAD_NONSCALAR_COST: fusor::grad needs a rank-0 cost (reduce it: sum(e), mean(e))");
  // Every target checked (not short-circuited): each refusal says which target it is.
  constexpr bool targets_ok = (0 + ... + int(!check_target<Cost, Targets>())) == 0;
  if constexpr (!(differentiable_v<C> && Cost::rank == 0 && targets_ok)) {
    // Refused above; nothing more is instantiated, so that stays the only
    // error (the targets stand in for their gradients).
    if constexpr (sizeof...(Targets) == 1) return target_leaf(targets...);
    else return std::make_tuple(target_leaf(targets)...);
  } else {
    return grad_leaves(cost, target_leaf(targets)...);
  }
}

}  // namespace detail::ad

/// The gradient of a rank-0 `cost` with respect to a shared variable or a
/// symbolic input `w`: an expression of w's shape and dtype. With several
/// targets, a tuple in their order: `auto [gw, gb] = fusor::grad(cost, w, b);`.
/// Each is a ref_node<gradient_of<K, ...>>: the gradient under a short name
/// (gradient_of above); `g.target()` is the expression itself.
///
/// A target that does not appear in the cost (Theano's disconnected input)
/// is a fusor::value_error when grad is called; a cost that is not rank 0, an
/// integer cost or an integer target does not compile.
///
/// The cost is differentiated after fusor's stable rewrites
/// (rewrite/stable.hpp): the gradient of log(sigmoid(x)) is that of
/// -softplus(-x), finite where the naive one is 0 / 0.
/// `grad(fusor::no_rewrites, cost, w...)` differentiates the cost as written.
template <class Cost, class... Targets>
  requires(std::derived_from<std::remove_cvref_t<Cost>, expression_base> && sizeof...(Targets) >= 1)
[[nodiscard]] auto grad(no_rewrites_t, const Cost& cost, const Targets&... targets) {
  return detail::ad::grad_all(cost, targets...);
}
template <class Cost, class... Targets>
  requires(std::derived_from<std::remove_cvref_t<Cost>, expression_base> && sizeof...(Targets) >= 1)
[[nodiscard]] auto grad(const Cost& cost, const Targets&... targets) {
  return grad(no_rewrites, stabilize(cost), targets...);
}

}  // namespace fusor
