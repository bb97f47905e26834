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

#include <algorithm>
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

/// Lists joined into one (concat_lists<tlist<A...>, tlist<B...>>::type is
/// tlist<A..., B...>).
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
// Two or three lists joined in one step, more four at a time: each step of
// the general case names a list as long as those joined so far.
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

/// Membership in a list of distinct types, as one base-class test (the
/// compiler's own, not a search along the list).
template <class T>
struct type_box {};
template <class... T>
struct type_set : type_box<T>... {};

/// The distinct types of `Set` followed by those of `More` not in it (both
/// lists of distinct types).
template <class Set, class More>
struct union_of;
template <class... A, class... B>
struct union_of<tlist<A...>, tlist<B...>> {
  using type = typename concat_lists<
      tlist<A...>, std::conditional_t<__is_base_of(type_box<B>, type_set<A...>), tlist<>, tlist<B>>...>::type;
};
template <class Set, class... More>
struct union_all {
  using type = Set;
};
template <class Set, class L, class... More>
struct union_all<Set, L, More...> : union_all<typename union_of<Set, L>::type, More...> {};

/// Every node type of X's tree once: X first, then its operands' types in
/// order, each type where it first occurs. A tree with repeated
/// sub-expressions has far fewer distinct types than nodes (a second
/// derivative's: 70 types at 4 607 positions), and the class of each type is
/// made once whatever its repeats, so this is as long as the types, not the
/// tree.
template <class X, class Children = typename children_of<X>::type>
struct distinct_types;
template <class X, class... C>
struct distinct_types<X, tlist<C...>> {
  using type = typename union_all<tlist<X>, typename distinct_types<C>::type...>::type;
};

/// The type at position I of the pack T..., looked up among the bases of one
/// class (indexed_pack): std::tuple_element would make a std::tuple of the
/// list and recurse over it once per lookup. (operand_tuple's
/// std::tuple_element is the same lookup, but its bases hold values and it
/// declares a constructor of every element.)
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

/// The position of T in a list of distinct types, from the same bases as
/// tlist_at (`table` points at the list's indexed_pack): the one base naming
/// T gives its index.
template <class T, std::size_t I>
constexpr std::size_t index_from(const pack_entry<I, T>*) noexcept {
  return I;
}

/// The positions of X's operand types in the distinct types whose
/// indexed_pack is Table, in operand order.
template <class X, class Table, class Children = typename children_of<X>::type>
struct operand_positions;
template <class X, class Table, class... C>
struct operand_positions<X, Table, tlist<C...>> {
  static constexpr std::size_t count = sizeof...(C);
  static constexpr std::size_t at[count + 1] = {index_from<C>(static_cast<const Table*>(nullptr))..., 0};
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

/// Whether type X is worth cutting in the walks towards the targets' types
/// Ws (a tlist): heavy, on a path to a target, none of the targets, not a
/// reference. (A cut point is such a type that also repeats: cuts_of.)
template <class X, class Ws>
inline constexpr bool cut_candidate_v =
    heavy<X>::value && reaches_any<X, Ws>::value && !is_one_of<X, Ws>::value && !is_ref_v<X>;

/// The cut points of the walks from Cost towards the targets' types Ws (a
/// tlist): types that occur more than once in Cost, lie on a path to one of
/// them (but are none of them), and are heavy; each listed once, a type
/// before every type inside it (larger trees first).
template <class Cost, class Ws, class Types = typename distinct_types<Cost>::type>
struct cuts_of;
template <class Cost, class... W, class... T>
struct cuts_of<Cost, tlist<W...>, tlist<T...>> {
  static constexpr std::size_t d = sizeof...(T);  // distinct types; T...[0] is Cost
  static constexpr std::size_t edges = (children_of<T>::type::size + ... + 0);
  using index_table = indexed_pack<std::index_sequence_for<T...>, T...>;

  /// What the walks need of the cost's tree, computed over its distinct
  /// types and the operand edges between them (a DAG), never over the tree's
  /// nodes: a type's occurrences in the tree are the paths to it from the
  /// root. (The tree of a second derivative has thousands of nodes, and g++
  /// takes microseconds per step of a constant evaluation: these tables
  /// took seconds of such a unit when they were computed per node.)
  struct tables {
    std::size_t order[d + 1];  ///< the chosen types (their positions in T...), larger trees first
    std::size_t live[d + 1];   ///< per chosen type: its occurrences an adjoint reaches
    std::size_t count;         ///< how many were chosen
  };
  static constexpr tables chosen = [] {
    // Each type's tree size, flow bits (which operands an adjoint enters), and
    // whether it is worth cutting. (One entry more than there are types or
    // edges, unread: a cost without operands makes no array of length zero.)
    const std::size_t size[d + 1] = {tree_size<T>::value..., 0};
    const std::uint64_t bits[d + 1] = {flow_bits<T>::value..., 0};
    const bool worth[d + 1] = {cut_candidate_v<T, tlist<W...>>..., false};
    // The operand edges: type i's operands are to[from[i] .. from[i + 1]).
    std::size_t from[d + 1] = {};
    std::size_t to[edges + 1] = {};
    {
      std::size_t e = 0, i = 0;
      const auto add = [&](const std::size_t* at, std::size_t count) {
        from[i++] = e;
        for (std::size_t k = 0; k < count; ++k) to[e++] = at[k];
      };
      (add(operand_positions<T, index_table>::at, operand_positions<T, index_table>::count), ...);
      from[d] = e;
    }
    // The types sorted by `before` (an insertion sort: a few dozen types).
    const auto sorted = [](auto before, std::size_t* out) {
      for (std::size_t i = 0; i < d; ++i) {
        std::size_t j = i;
        for (; j > 0 && before(i, out[j - 1]); --j) out[j] = out[j - 1];
        out[j] = i;
      }
    };
    // An operand's tree is smaller than its node's, so visiting the types by
    // decreasing size visits every type after all the types that contain it.
    std::size_t by_size[d + 1] = {};
    sorted([&](std::size_t a, std::size_t b) { return size[a] > size[b]; }, by_size);
    // Each type's first position in the tree's pre-order (the root at 0; an
    // operand k of a node at p at p + 1 + the sizes of operands 0..k-1):
    // among types of one size, the chosen ones are listed in this order.
    std::size_t first[d + 1] = {};
    for (std::size_t i = 1; i < d; ++i) first[i] = static_cast<std::size_t>(-1);
    for (std::size_t n = 0; n < d; ++n) {
      const std::size_t p = by_size[n];
      std::size_t at = first[p] + 1;
      for (std::size_t e = from[p]; e < from[p + 1]; ++e) {
        first[to[e]] = std::min(first[to[e]], at);
        at += size[to[e]];
      }
    }
    std::size_t order[d + 1] = {};  // by decreasing size, then by first position
    sorted([&](std::size_t a, std::size_t b) { return size[a] > size[b] || (size[a] == size[b] && first[a] < first[b]); },
           order);
    // Per type: `live`, its occurrences an adjoint can reach (the paths from
    // the root, if it is a float, whose every edge the gradient flows
    // through); `kept`, those of them not inside a repeat of a cut point
    // chosen before it. A candidate is a cut point when it occurs more than
    // once in the tree in which every cut point chosen before it is kept
    // once: the walk below a cut point goes on below one occurrence (per
    // value), and a type that repeats only because a cut point containing it
    // repeats is met once there, walked through in place. (Without this,
    // every node of a chain of nested repeated sub-expressions, as a layer's
    // output inside the next layer's, would be a cut point, and the adjoints'
    // types would compound from one to the next.) So a chosen type passes
    // one occurrence on to its operands, any other type all of its kept ones.
    std::size_t live[d + 1] = {}, kept[d + 1] = {};
    live[0] = kept[0] = std::is_floating_point_v<value_type_t<Cost>> ? 1 : 0;
    tables out{};
    for (std::size_t n = 0; n < d; ++n) {
      const std::size_t p = order[n];
      const bool cut = worth[p] && kept[p] > 1;
      if (cut) {
        out.order[out.count] = p;
        out.live[out.count] = live[p];
        ++out.count;
      }
      const std::size_t passed = cut ? 1 : kept[p];
      for (std::size_t e = from[p], k = 0; e < from[p + 1]; ++e, ++k)
        if (((bits[p] >> k) & 1) != 0) {
          live[to[e]] += live[p];
          kept[to[e]] += passed;
        }
    }
    return out;
  }();
  static constexpr std::size_t count = chosen.count;

  template <std::size_t... K>
  static auto list(std::index_sequence<K...>) -> tlist<tlist_at_t<chosen.order[K], tlist<T...>>...>;
  using type = decltype(list(std::make_index_sequence<count>{}));
  /// The number of occurrences of the K-th cut point (of `type`) an adjoint can reach.
  template <std::size_t K>
  static constexpr std::size_t live_count = chosen.live[K];
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
