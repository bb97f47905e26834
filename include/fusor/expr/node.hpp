// fusor/expr/node.hpp — what an expression is, at the type level.
//
// Expressions are lazy: building one computes nothing and allocates nothing
// but the nodes' own small members. Every node is a value: leaves hold
// shared<T> and input handles by value (reference counted), constants by value,
// and sub-expressions by value. No node stores a reference, so
// `auto e = a * b + c;` can be kept, copied and returned freely — it never
// dangles (contrast xtensor #1932/#2597, Eigen #680, Fastor #38).
//
// Each node type provides:
//   using value_type = E;                 // NumPy's result dtype, as a C++ type
//   static constexpr int rank = N;        // or fusor::dynamic_rank
//   std::string str() const;              // "(2 * x) + exp(W)"
//
// The node protocol. A node that holds sub-expressions also declares what the
// generic walks need to know about it, so that each walk is written once
// (expr/visit.hpp: its leaves; expr/key.hpp: its key; expr/substitute.hpp:
// swapping variables; expr/operands.hpp: its operand types; rewrite/stable.hpp:
// rebuilding it over rewritten operands; the device units' kernel walk):
//   auto held() const noexcept;           // its sub-expressions (detail::held), in a fixed
//                                         // order: the value operands first, then those
//                                         // read only for their shape (or as indices)
//   using operand_types = detail::tlist<A...>;  // the value operands' types: what its
//                                         // value is computed from, what a gradient flows
//                                         // through and the rewrites look into
//   static constexpr unsigned from_memory;  // bit k: held k is read from memory (a
//                                         // compound one is materialised first), not fused
//   template <class... H> auto remake(H... held) const;  // the same node, parameters and
//                                         // all, over other sub-expressions
//   void append_params(std::vector<std::uint64_t>& key) const;  // its run-time parameters
//                                         // (axes, extents, a view's items), where it has any
// Leaves hold nothing and declare none of it (expression_base's defaults).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/core/detect.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/operand_tuple.hpp"

namespace fusor {

namespace detail {
/// A list of types (a node's operand types, the walks over them).
template <class... T>
struct tlist {
  static constexpr std::size_t size = sizeof...(T);
};

/// What a node's held() returns: references to its sub-expressions, in order.
template <class... T>
using held_t = operand_tuple<const T&...>;
template <class... T>
FUSOR_INLINE FUSOR_PLUMBING auto held(const T&... x) noexcept {  // `auto`: g++ 12 cannot mangle the alias here
  return held_t<T...>(x...);
}
}  // namespace detail

/// Base of every expression node; only a tag, so that operators and concepts
/// recognise nodes without instantiating them.
struct expression_base {
  // Answered by every node, so that asking never fails (a failed probe costs
  // clang a message naming the node's whole type: core/detect.hpp). A node
  // written infix (`a + b`) or a NumPy-weak scalar constant declares its own.
  static constexpr bool infix = false;
  static constexpr bool weak = false;
  // A leaf's side of the node protocol (above): it holds nothing.
  using operand_types = detail::tlist<>;
  static constexpr unsigned from_memory = 0;
  static constexpr bool holds = false;  ///< whether the node has held()
  static void append_params(std::vector<std::uint64_t>&) noexcept {}  // no run-time parameters
};

template <class T>
concept expression = std::derived_from<std::remove_cvref_t<T>, expression_base> &&
                     element<typename std::remove_cvref_t<T>::value_type> &&
                     requires(const std::remove_cvref_t<T>& e) {
                       { std::remove_cvref_t<T>::rank } -> std::convertible_to<int>;
                       { e.str() } -> std::convertible_to<std::string>;
                     };

template <expression E>
using value_type_t = typename std::remove_cvref_t<E>::value_type;

template <expression E>
inline constexpr int rank_v = std::remove_cvref_t<E>::rank;

namespace detail {
/// The rank of a broadcast of two ranks (dynamic if either is).
constexpr int broadcast_rank(int a, int b) noexcept {
  return (a == dynamic_rank || b == dynamic_rank) ? dynamic_rank : (a > b ? a : b);
}
template <class... Ranks>
constexpr int broadcast_rank(int a, int b, Ranks... rest) noexcept {
  return broadcast_rank(broadcast_rank(a, b), rest...);
}
}  // namespace detail

}  // namespace fusor
