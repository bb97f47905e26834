// fusor/grad/structure.hpp — what reverse mode knows from an expression's
// type alone: each node's operand types, how often a type occurs in the tree,
// and which sub-expression types occur more than once (where the walk must
// meet once, not once per occurrence).
//
// An expression is a tree of types; a sub-expression used twice (p in
// -y * log(p) - (1 - y) * log(1 - p)) is two equal sub-trees. Walking the
// tree back from the cost would push two adjoints separately through p and
// everything below it — two backward dots where one is enough. So the types
// that occur more than once and hold work worth sharing (a dot, a reduction,
// a reshape) are cut points: every walk stops there, their adjoint is summed
// over their occurrences first, and the walk continues below them once. A
// type is counted in the tree where every larger cut point is kept once: in
// a perceptron's cost the logits occur several times, and the hidden layer
// inside them is met once below them, not made a cut point of its own. Equal
// types need not be equal values (sum(W1 * W1) + sum(W2 * W2)); that is
// checked when grad is called, and each value is walked below once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "fusor/core/operand_tuple.hpp"
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
#include "fusor/expr/operands.hpp"
#include "fusor/grad/rules.hpp"

namespace fusor::detail::ad {

/// How many times type W occurs in the tree of X (X itself included).
template <class X, class W, class Children = typename children_of<X>::type>
struct occurrences;
template <class X, class W, class... C>
struct occurrences<X, W, tlist<C...>>
    : std::integral_constant<int, (std::is_same_v<X, W> ? 1 : 0) + (occurrences<C, W>::value + ... + 0)> {};

template <class X, class W>
inline constexpr bool reaches_v = occurrences<X, W>::value > 0;

/// The index of T in a tlist, or -1.
template <class T, class List>
struct index_in;
template <class T, class... L>
struct index_in<T, tlist<L...>> {
  static constexpr int value = [] {
    constexpr bool match[] = {std::is_same_v<T, L>..., false};
    for (std::size_t i = 0; i < sizeof...(L); ++i)
      if (match[i]) return static_cast<int>(i);
    return -1;
  }();
};

/// Whether W occurs in X's tree (X itself included) on a path that passes no
/// node of the type list Cuts: the walks of the reverse pass stop at every
/// cut point (its adjoint is summed there and walked below once).
template <class X, class W, class Cuts, class Children = typename children_of<X>::type>
struct reaches_direct;
template <class X, class W, class Cuts, class... C>
struct reaches_direct<X, W, Cuts, tlist<C...>>
    : std::bool_constant<std::is_same_v<X, W> ||
                         (index_in<X, Cuts>::value < 0 && (reaches_direct<C, W, Cuts>::value || ...))> {};
template <class X, class W, class Cuts>
inline constexpr bool reaches_direct_v = reaches_direct<X, W, Cuts>::value;

/// Whether W occurs below X (X not counted) without passing a cut point.
template <class X, class W, class Cuts, class Children = typename children_of<X>::type>
struct reaches_below;
template <class X, class W, class Cuts, class... C>
struct reaches_below<X, W, Cuts, tlist<C...>> : std::bool_constant<(reaches_direct<C, W, Cuts>::value || ...)> {};

/// The number of nodes of X's tree.
template <class X, class Children = typename children_of<X>::type>
struct tree_size;
template <class X, class... C>
struct tree_size<X, tlist<C...>> : std::integral_constant<std::size_t, 1 + (tree_size<C>::value + ... + 0)> {};

/// Whether X's tree holds work worth sharing between occurrences: anything
/// but elementwise nodes and leaves (which a fused kernel recomputes for free).
template <class X>
struct heavy;
template <class X, class Children = typename children_of<X>::type>
struct any_heavy;
template <class X, class... C>
struct any_heavy<X, tlist<C...>> : std::bool_constant<(heavy<C>::value || ...)> {};
template <class X>
struct heavy : std::bool_constant<!std::is_same_v<typename children_of<X>::type, tlist<>>> {};  // not a leaf
template <class F, class S, class... A>
struct heavy<map_node<F, S, A...>> : any_heavy<map_node<F, S, A...>> {};
template <element T, class A>
struct heavy<cast_node<T, A>> : heavy<A> {};
template <class C>
struct heavy<gate_node<C>> : heavy<C> {};
template <class X>
struct heavy<ref_node<X>> : heavy<typename ref_node<X>::target_type> {};

/// Every node type of X's tree, in pre-order, with repeats.
template <class... L>
struct concat_lists;
template <>
struct concat_lists<> {
  using type = tlist<>;
};
template <class... A>
struct concat_lists<tlist<A...>> {
  using type = tlist<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_lists<tlist<A...>, tlist<B...>, Rest...> : concat_lists<tlist<A..., B...>, Rest...> {};

template <class X, class Children = typename children_of<X>::type>
struct flatten;
template <class X, class... C>
struct flatten<X, tlist<C...>> {
  using type = typename concat_lists<tlist<X>, typename flatten<C>::type...>::type;
};

/// Whether a gradient can flow from node X into its operand K (given that
/// the operand's value is a float): what the walk itself prunes, in types. A
/// sub-expression below a stop_gradient, a where's condition, a comparison or
/// an index never receives an adjoint.
template <class X, std::size_t K>
struct flows : std::bool_constant<std::is_floating_point_v<value_type_t<X>>> {};
template <class F, class S, class... A, std::size_t K>
struct flows<map_node<F, S, A...>, K> {
  static constexpr bool value = [] {
    using X = map_node<F, S, A...>;
    if constexpr (!std::is_floating_point_v<typename X::value_type> || !rule<F>::has) return false;
    else return rule<F>::template has_operand<K> && std::is_floating_point_v<cast_at_t<K, typename X::casts>>;
  }();
};
template <class A, class I, int N>
struct flows<take_node<A, I, N>, 1> : std::false_type {};

/// flows<X, K> for every operand K of X, as bits.
template <class X, class Children = typename children_of<X>::type>
struct flow_bits;
template <class X, class... C>
struct flow_bits<X, tlist<C...>> {
  template <std::size_t... K>
  static constexpr std::uint64_t bits(std::index_sequence<K...>) {
    return (std::uint64_t{0} | ... |
            (flows<X, K>::value && std::is_floating_point_v<value_type_t<C>> ? std::uint64_t{1} << K : std::uint64_t{0}));
  }
  static constexpr std::uint64_t value = bits(std::index_sequence_for<C...>{});
};

template <class X, class Ws>
struct reaches_any;
template <class X, class... W>
struct reaches_any<X, tlist<W...>> : std::bool_constant<(reaches_v<X, W> || ...)> {};
template <class X, class Ws>
struct is_one_of;
template <class X, class... W>
struct is_one_of<X, tlist<W...>> : std::bool_constant<(std::is_same_v<X, W> || ...)> {};

/// The cut points of the walks from Cost towards the targets' types Ws (a
/// tlist): types that occur more than once in Cost, lie on a path to one of
/// them (but are none of them), and are heavy; each listed once, a type
/// before every type inside it (larger trees first).
template <class Cost, class Ws, class All = typename flatten<Cost>::type>
struct cuts_of;
template <class Cost, class... W, class... X>
struct cuts_of<Cost, tlist<W...>, tlist<X...>> {
  static constexpr std::size_t n = sizeof...(X);

  /// Each position's type as an address (detail::type_tag): one per type. A
  /// built-in array, not std::array: its operator[] is a call, which clang
  /// counts against its bound on a constant evaluation's steps, and a second
  /// derivative's list came past it. (One entry more, unread, so that no
  /// list makes an array of length zero.)
  static constexpr const void* tags[n + 1] = {&type_tag<X>..., nullptr};
  /// A number per distinct type of the list: the position of its first
  /// occurrence. Found by comparing addresses, not by std::is_same_v of T
  /// with every position's type: that was one instance per pair of
  /// positions, and a second derivative's list runs to thousands of them.
  template <class T>
  static constexpr std::size_t type_id() {
    for (std::size_t i = 0; i < n; ++i)
      if (tags[i] == &type_tag<T>) return i;
    return n;
  }
  static constexpr std::array<std::size_t, n> ids{type_id<X>()...};

  static constexpr std::array<std::size_t, n> sizes{tree_size<X>::value...};

  /// The positions an adjoint can reach: none below an operand the gradient
  /// does not flow into (flows<>), nor at a node that is not a float. Only
  /// these occurrences are cut points' sites (visit_live_nodes walks them).
  static constexpr std::array<bool, n> live_positions() {
    constexpr std::array<std::uint64_t, n> bits{flow_bits<X>::value...};
    constexpr std::array<bool, n> is_float{std::is_floating_point_v<value_type_t<X>>...};
    std::array<bool, n> live{};
    if (n > 0) live[0] = is_float[0];
    for (std::size_t q = 0; q < n; ++q) {
      std::size_t c = q + 1;  // the operands of q, one after the other's tree
      for (std::size_t k = 0; c < q + sizes[q] && c < n; ++k) {
        live[c] = live[q] && ((bits[q] >> k) & 1) != 0;
        c += sizes[c];
      }
    }
    return live;
  }
  static constexpr std::array<bool, n> live = live_positions();

  /// The number of reachable occurrences of the type whose first position is `id`.
  static constexpr std::size_t live_occurrences(std::size_t id) {
    std::size_t count = 0;
    for (std::size_t j = 0; j < n; ++j) count += ids[j] == id && live[j];
    return count;
  }
  /// The number of occurrences of S an adjoint can reach.
  template <class S>
  static constexpr std::size_t live_count() {
    return live_occurrences(type_id<S>());
  }

  /// Selected positions of the pre-order list, larger trees first; the count last.
  /// Linear in the list's length: a second derivative's list runs to
  /// thousands of positions, and a constant expression's evaluation is
  /// bounded (clang stops at a million steps), so nothing here loops over
  /// the whole list once per type.
  static constexpr std::array<std::size_t, n + 1> order = [] {
    constexpr std::array<bool, n> worth{
        (heavy<X>::value && reaches_any<X, tlist<W...>>::value && !is_one_of<X, tlist<W...>>::value &&
         !is_ref_v<X>)...};
    // Per type (at its first position): its live occurrences not inside a
    // later occurrence of a chosen cut point (below); per position: the next
    // occurrence of its type (n: none).
    std::array<std::size_t, n> remaining{};
    std::array<std::size_t, n> next{};
    std::array<std::size_t, n> last{};
    for (std::size_t j = 0; j < n; ++j) {
      next[j] = n;
      if (live[j]) ++remaining[ids[j]];
      if (ids[j] != j) next[last[ids[j]]] = j;
      last[ids[j]] = j;
    }
    // The candidates: heavy types on a path to a target that occur more
    // than once; larger trees first (a type comes before those inside it),
    // in the order of their first positions among equal sizes (a counting
    // sort by size).
    const auto candidate = [&](std::size_t i) { return ids[i] == i && worth[i] && remaining[i] > 1; };
    std::array<std::size_t, n> candidates{};
    std::array<std::size_t, n + 1> start{};  // per size: where its candidates go
    std::size_t m = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (candidate(i)) ++start[sizes[i]], ++m;
    for (std::size_t size = n + 1, at = 0; size-- > 0;) {
      const std::size_t here = start[size];
      start[size] = at;
      at += here;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (candidate(i)) candidates[start[sizes[i]]++] = i;
    // A candidate is a cut point when it occurs more than once in the tree
    // in which every cut point chosen before it is kept once: the walk below
    // a cut point goes on below one occurrence (per value), and a type that
    // repeats only because a cut point containing it repeats is met once
    // there, walked through in place. (Without this, every node of a chain
    // of nested repeated sub-expressions, as a layer's output inside the
    // next layer's, would be a cut point, and the adjoints' types would
    // compound from one to the next.)
    std::array<bool, n> inside_repeat{};  // below a later occurrence of a chosen cut point
    std::array<std::size_t, n + 1> out{};
    std::size_t k = 0;
    for (std::size_t c = 0; c < m; ++c) {
      const std::size_t id = candidates[c];
      if (remaining[id] < 2) continue;
      out[k++] = id;
      bool first = true;
      for (std::size_t j = id; j < n; j = next[j]) {
        if (!live[j] || inside_repeat[j]) continue;
        if (first) {
          first = false;
          continue;
        }
        // Marks the tree below j. A marked position's whole tree is marked
        // already (marks cover whole operand trees): skipped at once.
        for (std::size_t q = j + 1; q < j + sizes[j] && q < n;) {
          if (inside_repeat[q]) {
            q += sizes[q];
            continue;
          }
          inside_repeat[q] = true;
          if (live[q]) --remaining[ids[q]];
          ++q;
        }
      }
    }
    out[n] = k;
    return out;
  }();
  static constexpr std::size_t count = order[n];

  template <std::size_t... K>
  static auto list(std::index_sequence<K...>) -> tlist<std::tuple_element_t<order[K], std::tuple<X...>>...>;
  using type = decltype(list(std::make_index_sequence<count>{}));
};

/// Calls f(node, open) for every node of e's tree an adjoint can reach, in
/// pre-order: the live positions of cuts_of, at run time. `open`: no closed
/// gate (expr/shape_like.hpp) lies above the node, so its value is read.
template <class X, class F>
void visit_live_nodes(const X& e, F&& f, bool open = true) {
  if constexpr (std::is_floating_point_v<value_type_t<X>>) {
    f(e, open);
    if constexpr (is_gate_v<X>) open = open && e.on();
    constexpr std::uint64_t bits = flow_bits<X>::value;
    auto at = [&]<std::size_t K>(std::integral_constant<std::size_t, K>, const auto& operand) {
      if constexpr (((bits >> K) & 1) != 0) visit_live_nodes(operand, f, open);
    };
    if constexpr (detail::has<detail::member::args, X>) {
      [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        (at(std::integral_constant<std::size_t, K>{}, detail::get<K>(e.args())), ...);
      }(std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(e.args())>>>{});
    } else if constexpr (detail::has<detail::member::lhs, X>) {
      at(std::integral_constant<std::size_t, 0>{}, e.lhs());
      at(std::integral_constant<std::size_t, 1>{}, e.rhs());
    } else if constexpr (detail::has<detail::member::indices, X>) {
      at(std::integral_constant<std::size_t, 0>{}, e.arg());
      at(std::integral_constant<std::size_t, 1>{}, e.indices());
    } else if constexpr (detail::has<detail::member::arg, X>) {
      at(std::integral_constant<std::size_t, 0>{}, e.arg());
    }
  }
}

}  // namespace fusor::detail::ad
