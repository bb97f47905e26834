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
// Up to three lists joined in one step (a node's own entry and two operands'
// lists, the common case): each step of the general case names a list as
// long as those joined so far, and a second derivative's run to thousands.
template <class... A, class... B>
struct concat_lists<tlist<A...>, tlist<B...>> {
  using type = tlist<A..., B...>;
};
template <class... A, class... B, class... C>
struct concat_lists<tlist<A...>, tlist<B...>, tlist<C...>> {
  using type = tlist<A..., B..., C...>;
};
template <class... A, class... B, class... C, class... D, class... Rest>
struct concat_lists<tlist<A...>, tlist<B...>, tlist<C...>, tlist<D...>, Rest...>
    : concat_lists<tlist<A..., B..., C..., D...>, Rest...> {};

template <class X, class Children = typename children_of<X>::type>
struct flatten;
template <class X, class... C>
struct flatten<X, tlist<C...>> {
  using type = typename concat_lists<tlist<X>, typename flatten<C>::type...>::type;
};

/// The type at position I of the pack T..., looked up among the bases of one
/// class (indexed_pack): std::tuple_element would make a std::tuple of a
/// pre-order list thousands of types long, and recurse over it once per
/// lookup. (operand_tuple's std::tuple_element is the same lookup, but its
/// bases hold values and it declares a constructor of every element: 13 %
/// more memory for the tables of a second derivative's list.)
template <std::size_t I, class T>
struct pack_entry {
  using type = T;
};
template <class Indices, class... T>
struct indexed_pack;
template <std::size_t... I, class... T>
struct indexed_pack<std::index_sequence<I...>, T...> : pack_entry<I, T>... {};
template <std::size_t I, class T>
pack_entry<I, T> entry_at(const pack_entry<I, T>&);

/// The type at position I of a tlist.
template <std::size_t I, class List>
struct tlist_at;
template <std::size_t I, class... T>
struct tlist_at<I, tlist<T...>> {
  using type =
      typename decltype(entry_at<I>(std::declval<const indexed_pack<std::index_sequence_for<T...>, T...>&>()))::type;
};
template <std::size_t I, class List>
using tlist_at_t = typename tlist_at<I, List>::type;

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
/// A built-in array that a constant evaluation can return (cuts_of).
template <class T, std::size_t N>
struct fixed_array {
  T v[N];
};

template <class Cost, class... W, class... X>
struct cuts_of<Cost, tlist<W...>, tlist<X...>> {
  static constexpr std::size_t n = sizeof...(X);

  // A second derivative's list runs to thousands of positions, and a
  // constant evaluation is slow and bounded, so the tables below are built
  // with care (a second derivative's unit spent 8 s and 1.3 GB of g++ in
  // them before):
  // - Each is a built-in array with one entry more than the list (unread: no
  //   list makes an array of length zero), read and written by subscript:
  //   std::array's operator[] is a call, which clang counts against its
  //   bound on an evaluation's steps (a million).
  // - An evaluation reads no constant array in its loops: it copies what it
  //   reads into variables of its own first. g++ copies a constant's whole
  //   value at every read of it, so a loop over a constant array is
  //   quadratic in the list's length.
  // - Each table is computed in an evaluation of its own, and nothing loops
  //   over the whole list once per type.

  /// Each position's tree size: its operands' trees follow it in the list.
  static constexpr fixed_array<std::size_t, n + 1> tree_sizes{{tree_size<X>::value..., 0}};

  /// A number per distinct type of the list: the position of its first
  /// occurrence. Two positions hold the same type only if their trees are
  /// the same size, so the addresses are compared only among positions of
  /// one size (a counting sort by size, keeping the pre-order within a
  /// size): a few comparisons per position, where searching the whole list
  /// for each type was one per type and position before it. (Addresses can
  /// only be compared for equality in a constant expression, not ordered or
  /// hashed. g++ keeps every step of a constant evaluation until it ends:
  /// that search took a second derivative's unit 2.8-3.7 s and 0.65-1.2 GB.)
  static constexpr fixed_array<std::size_t, n + 1> ids = [] {
    const void* tags[n + 1] = {&type_tag<X>..., nullptr};  // each position's type, as an address
    auto sizes = tree_sizes;
    fixed_array<std::size_t, n + 1> id{};
    std::size_t start[n + 2] = {};  // per size: where its positions go
    for (std::size_t j = 0; j < n; ++j) ++start[sizes.v[j] + 1];
    for (std::size_t size = 1; size < n + 2; ++size) start[size] += start[size - 1];
    std::size_t at[n + 2] = {};
    for (std::size_t size = 0; size < n + 2; ++size) at[size] = start[size];
    std::size_t by_size[n + 1] = {};
    for (std::size_t j = 0; j < n; ++j) by_size[at[sizes.v[j]]++] = j;
    // Each size's first positions of its distinct types: firsts[from..count).
    std::size_t firsts[n + 1] = {};
    std::size_t count = 0;
    for (std::size_t size = 1; size <= n; ++size) {
      const std::size_t from = count;
      for (std::size_t p = start[size]; p < start[size + 1]; ++p) {
        const std::size_t j = by_size[p];
        std::size_t f = from;
        while (f < count && tags[firsts[f]] != tags[j]) ++f;
        if (f == count) firsts[count++] = j;
        id.v[j] = firsts[f];
      }
    }
    return id;
  }();

  /// The positions an adjoint can reach: none below an operand the gradient
  /// does not flow into (flows<>), nor at a node that is not a float. Only
  /// these occurrences are cut points' sites (visit_live_nodes walks them).
  static constexpr fixed_array<bool, n + 1> live = [] {
    auto sizes = tree_sizes;
    std::uint64_t bits[n + 1] = {flow_bits<X>::value..., 0};
    bool is_float[n + 1] = {std::is_floating_point_v<value_type_t<X>>..., false};
    fixed_array<bool, n + 1> reached{};
    reached.v[0] = is_float[0];
    for (std::size_t q = 0; q < n; ++q) {
      std::size_t c = q + 1;  // the operands of q, one after the other's tree
      for (std::size_t k = 0; c < q + sizes.v[q] && c < n; ++k) {
        reached.v[c] = reached.v[q] && ((bits[q] >> k) & 1) != 0;
        c += sizes.v[c];
      }
    }
    return reached;
  }();

  /// Per type (at its first position): its occurrences an adjoint can reach.
  static constexpr fixed_array<std::size_t, n + 1> live_occurrences = [] {
    auto id = ids;
    auto reached = live;
    fixed_array<std::size_t, n + 1> count{};
    for (std::size_t j = 0; j < n; ++j) count.v[id.v[j]] += reached.v[j];
    return count;
  }();

  /// Selected positions of the pre-order list, larger trees first; the count
  /// last (at n).
  static constexpr fixed_array<std::size_t, n + 1> order = [] {
    bool worth[n + 1] = {(heavy<X>::value && reaches_any<X, tlist<W...>>::value &&
                          !is_one_of<X, tlist<W...>>::value && !is_ref_v<X>)...,
                         false};
    auto sizes = tree_sizes;
    auto id_of = ids;
    auto reached = live;
    // Per type (at its first position): its live occurrences not inside a
    // later occurrence of a chosen cut point (below); per position: the next
    // occurrence of its type (n: none).
    std::size_t remaining[n + 1] = {};
    std::size_t next[n + 1] = {};
    std::size_t last[n + 1] = {};
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t id = id_of.v[j];
      next[j] = n;
      remaining[id] += reached.v[j];
      if (id != j) next[last[id]] = j;
      last[id] = j;
    }
    // The candidates: heavy types on a path to a target that occur more
    // than once; larger trees first (a type comes before those inside it),
    // in the order of their first positions among equal sizes (a counting
    // sort by size).
    bool candidate[n + 1] = {};
    for (std::size_t i = 0; i < n; ++i) candidate[i] = id_of.v[i] == i && worth[i] && remaining[i] > 1;
    std::size_t candidates[n + 1] = {};
    std::size_t start[n + 2] = {};  // per size: where its candidates go
    std::size_t m = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (candidate[i]) ++start[sizes.v[i]], ++m;
    for (std::size_t size = n + 1, at = 0; size-- > 0;) {
      const std::size_t here = start[size];
      start[size] = at;
      at += here;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (candidate[i]) candidates[start[sizes.v[i]]++] = i;
    // A candidate is a cut point when it occurs more than once in the tree
    // in which every cut point chosen before it is kept once: the walk below
    // a cut point goes on below one occurrence (per value), and a type that
    // repeats only because a cut point containing it repeats is met once
    // there, walked through in place. (Without this, every node of a chain
    // of nested repeated sub-expressions, as a layer's output inside the
    // next layer's, would be a cut point, and the adjoints' types would
    // compound from one to the next.)
    bool inside_repeat[n + 1] = {};  // below a later occurrence of a chosen cut point
    fixed_array<std::size_t, n + 1> out{};
    std::size_t k = 0;
    for (std::size_t c = 0; c < m; ++c) {
      const std::size_t id = candidates[c];
      if (remaining[id] < 2) continue;
      out.v[k++] = id;
      bool first = true;
      for (std::size_t j = id; j < n; j = next[j]) {
        if (!reached.v[j] || inside_repeat[j]) continue;
        if (first) {
          first = false;
          continue;
        }
        // Marks the tree below j. A marked position's whole tree is marked
        // already (marks cover whole operand trees): skipped at once.
        for (std::size_t q = j + 1; q < j + sizes.v[j] && q < n;) {
          if (inside_repeat[q]) {
            q += sizes.v[q];
            continue;
          }
          inside_repeat[q] = true;
          if (reached.v[q]) --remaining[id_of.v[q]];
          ++q;
        }
      }
    }
    out.v[n] = k;
    return out;
  }();
  static constexpr std::size_t count = order.v[n];

  template <std::size_t... K>
  static auto list(std::index_sequence<K...>) -> tlist<tlist_at_t<order.v[K], tlist<X...>>...>;
  using type = decltype(list(std::make_index_sequence<count>{}));
  /// The number of occurrences of the K-th cut point (of `type`) an adjoint can reach.
  template <std::size_t K>
  static constexpr std::size_t live_count = live_occurrences.v[order.v[K]];
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
