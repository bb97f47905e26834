// fusor/expr/ref.hpp — a shared, immutable reference to an expression.
//
// Expression nodes hold their operands by value: simple, and nothing dangles.
// A gradient refers to the forward expression many times (each local
// derivative reads its node and operands), and by value each reference would
// copy the sub-tree — the objects of a two-layer perceptron's gradients ran to
// megabytes. ref(x) holds one copy of x, shared; in every other respect it is
// x: the same node of a function's graph, the same kernel, the same text.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "fusor/expr/node.hpp"

namespace fusor {

template <class X>
class ref_node : public expression_base {
 public:
  using value_type = value_type_t<X>;
  using target_type = X;
  static constexpr int rank = X::rank;

  explicit ref_node(X x) : target_(std::make_shared<const X>(std::move(x))) {}
  explicit ref_node(std::shared_ptr<const X> x) : target_(std::move(x)) {}
  /// The expression referred to (also `arg()`, for the walks that look below
  /// a node: a reference is transparent to them).
  const X& target() const noexcept { return *target_; }
  const X& arg() const noexcept { return *target_; }
  std::string str() const { return target_->str(); }

 private:
  std::shared_ptr<const X> target_;
};

template <class X>
inline constexpr bool is_ref_v = false;
template <class X>
inline constexpr bool is_ref_v<ref_node<X>> = true;

namespace detail {
/// A shared reference to x (x itself when it is one, or a leaf: small already).
template <class X>
auto ref(const X& x) {
  if constexpr (is_ref_v<X>) return x;
  else if constexpr (sizeof(X) <= 2 * sizeof(void*)) return x;
  else return ref_node<X>(x);
}
}  // namespace detail

}  // namespace fusor
