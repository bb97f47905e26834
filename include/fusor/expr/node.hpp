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
//   template <class F> void for_each_leaf(F&&) const;  (through children())
#pragma once

#include <concepts>
#include <string>
#include <type_traits>

#include "fusor/core/config.hpp"
#include "fusor/core/detect.hpp"
#include "fusor/core/dtype.hpp"

namespace fusor {

/// Base of every expression node; only a tag, so that operators and concepts
/// recognise nodes without instantiating them.
struct expression_base {
  // Answered by every node, so that asking never fails (a failed probe costs
  // clang a message naming the node's whole type: core/detect.hpp). A node
  // written infix (`a + b`) or a NumPy-weak scalar constant declares its own.
  static constexpr bool infix = false;
  static constexpr bool weak = false;
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
