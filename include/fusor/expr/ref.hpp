// fusor/expr/ref.hpp — a shared, immutable reference to an expression.
//
// Expression nodes hold their operands by value: simple, and nothing dangles.
// A gradient refers to the forward expression many times (each local
// derivative reads its node and operands), and by value each reference would
// copy the sub-tree — the objects of a two-layer perceptron's gradients ran to
// megabytes. ref(x) holds one copy of x, shared; in every other respect it is
// x: the same node of a function's graph, the same kernel, the same text.
#pragma once

#include <atomic>
#include <string>
#include <type_traits>
#include <utility>

#include "fusor/expr/node.hpp"

namespace fusor {

namespace detail {
/// The shared part of a ref_node: a count and how to destroy the block. Not
/// std::shared_ptr: its control block is a class template per referred type
/// with a vtable, type information and about fifteen functions (allocation,
/// disposal, the atomic count's helpers) — per node type of every gradient.
/// Here a referred type costs its holder's constructor and one function
/// (ref_holder<X>::destroy_ref); counting is compiled once.
struct ref_block {
  std::atomic<long> count{1};
  void (*destroy)(ref_block*) noexcept = nullptr;
};
template <class X>
struct ref_holder : ref_block {
  explicit ref_holder(X&& x) : value(FUSOR_MOVE(x)) { destroy = &destroy_ref; }
  static void destroy_ref(ref_block* b) noexcept { delete static_cast<ref_holder*>(b); }
  X value;
};
inline void retain(ref_block* b) noexcept {
  if (b) b->count.fetch_add(1, std::memory_order_relaxed);
}
inline void release(ref_block* b) noexcept {
  if (b && b->count.fetch_sub(1, std::memory_order_acq_rel) == 1) b->destroy(b);
}
}  // namespace detail

template <class X>
class ref_node : public expression_base {
 public:
  using value_type = value_type_t<X>;
  using target_type = X;
  static constexpr int rank = X::rank;

  explicit ref_node(X x) {
    auto* h = new detail::ref_holder<X>(FUSOR_MOVE(x));
    block_ = h;
    target_ = &h->value;
  }
  ref_node(const ref_node& o) noexcept : block_(o.block_), target_(o.target_) { detail::retain(block_); }
  ref_node(ref_node&& o) noexcept : block_(std::exchange(o.block_, nullptr)), target_(o.target_) {}
  ref_node& operator=(ref_node o) noexcept {
    std::swap(block_, o.block_);
    std::swap(target_, o.target_);
    return *this;
  }
  ~ref_node() { detail::release(block_); }

  /// The expression referred to (also `arg()`, for the walks that look below
  /// a node: a reference is transparent to them).
  const X& target() const noexcept { return *target_; }
  const X& arg() const noexcept { return *target_; }

  // The node protocol (expr/node.hpp): its target, as if written in its place.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<X>;
  auto held() const noexcept { return detail::held(*target_); }
  template <class H>
  auto remake(H h) const {
    return ref_node<H>(FUSOR_MOVE(h));
  }
  std::string str() const { return target_->str(); }

 private:
  detail::ref_block* block_ = nullptr;
  const X* target_ = nullptr;
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
