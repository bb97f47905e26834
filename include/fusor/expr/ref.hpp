// fusor/expr/ref.hpp — a shared, immutable reference to an expression.
//
// Expression nodes hold their operands by value: simple, and nothing dangles.
// A gradient refers to the forward expression many times (each local
// derivative reads its node and operands), and by value each reference would
// copy the sub-tree — the objects of a two-layer perceptron's gradients ran to
// megabytes. ref(x) holds one copy of x, shared; in every other respect it is
// x: the same node of a function's graph, the same kernel, the same text.
//
// A reference's type may also be spelled by a *name* for its target's type
// (a gradient's: grad/reverse.hpp): a class with a member `named_type`, so
// that ref_node<name> refers to a name::named_type. The name is short where
// the target's type is not: a gradient's type repeats its forward expression
// (tens of kilobytes written out, for a two-layer perceptron), and every
// type and function over the reference — a std::tuple of gradients and its
// machinery, an update of a variable by one, a function's type — is named by
// it, in the symbol table and, with -g, in the debug information.
#pragma once

#include <atomic>
#include <string>
#include <type_traits>
#include <utility>

#include "fusor/expr/node.hpp"

namespace fusor {

namespace detail {
/// What a ref_node<S> refers to: S itself, or the type S names. Overloads
/// in decltype, not a trait class: a class instantiated per reference would
/// be one more name per reference's type in the debug information.
template <class S>
S ref_target_of(const S*);
template <class S>
  requires requires { typename S::named_type; }
typename S::named_type ref_target_of(const S*);
template <class S>
using ref_target_t = decltype(detail::ref_target_of(static_cast<const S*>(nullptr)));

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
/// S: the reference's spelling (ref_target_t<S> is held), so that the
/// holder of a named target is named as briefly as its reference.
template <class S>
struct ref_holder : ref_block {
  explicit ref_holder(ref_target_t<S>&& x) : value(FUSOR_MOVE(x)) { destroy = &destroy_ref; }
  static void destroy_ref(ref_block* b) noexcept { delete static_cast<ref_holder*>(b); }
  ref_target_t<S> value;
};
inline void retain(ref_block* b) noexcept {
  if (b) b->count.fetch_add(1, std::memory_order_relaxed);
}
inline void release(ref_block* b) noexcept {
  if (b && b->count.fetch_sub(1, std::memory_order_acq_rel) == 1) b->destroy(b);
}
}  // namespace detail

/// S: the target's type, or a name for it (above).
template <class S>
class ref_node : public expression_base {
 public:
  using target_type = detail::ref_target_t<S>;
  using value_type = value_type_t<target_type>;
  static constexpr int rank = target_type::rank;

  explicit ref_node(target_type x) {
    auto* h = new detail::ref_holder<S>(FUSOR_MOVE(x));
    block_ = h;
    target_ = &h->value;
  }
  // Copies, moves and destruction: a count's step, folded into the node
  // that holds the reference (an unoptimised build compiled each as a
  // function per reference type).
  FUSOR_PLUMBING ref_node(const ref_node& o) noexcept : block_(o.block_), target_(o.target_) {
    detail::retain(block_);
  }
  FUSOR_PLUMBING ref_node(ref_node&& o) noexcept : block_(o.block_), target_(o.target_) { o.block_ = nullptr; }
  FUSOR_PLUMBING ref_node& operator=(ref_node o) noexcept {
    detail::ref_block* const b = block_;
    block_ = o.block_;
    o.block_ = b;
    target_ = o.target_;
    return *this;
  }
  FUSOR_PLUMBING ~ref_node() { detail::release(block_); }

  /// The expression referred to (also `arg()`, for the walks that look below
  /// a node: a reference is transparent to them).
  FUSOR_PLUMBING const target_type& target() const noexcept { return *target_; }
  FUSOR_PLUMBING const target_type& arg() const noexcept { return *target_; }

  // The node protocol (expr/node.hpp): its target, as if written in its place.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<target_type>;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(*target_); }
  /// The reference to `h`, the target rebuilt (a rewrite, a substitution):
  /// under the same name when `h` is of the target's type, so that a rewrite
  /// that changes nothing in a gradient leaves its type short.
  template <class H>
  auto remake(H h) const {
    if constexpr (std::is_same_v<H, target_type>) return ref_node(FUSOR_MOVE(h));
    else return ref_node<H>(FUSOR_MOVE(h));
  }
  std::string str() const { return target_->str(); }

 private:
  detail::ref_block* block_ = nullptr;
  const target_type* target_ = nullptr;
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
