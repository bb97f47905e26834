// fusor/expr/visit.hpp — walking an expression's leaves: which shared
// variables and inputs it reads, and the broadcastable pattern it has. Used
// when a function is built, to decide in-place writes and check updates.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_ops.hpp"

namespace fusor {

/// Calls f(leaf) for every leaf (input, shared_leaf, constant) of `e`.
template <class F, class T, int N>
void visit_leaves(const input<T, N>& e, F&& f) {
  f(e);
}
template <class F, class T>
void visit_leaves(const shared_leaf<T>& e, F&& f) {
  f(e);
}
template <class F, element E>
void visit_leaves(const constant<E>& e, F&& f) {
  f(e);
}
template <class F, class Fn, class R, class Casts, class... A>
void visit_leaves(const map_node<Fn, R, Casts, A...>& e, F&& f) {
  std::apply([&](const auto&... a) { (visit_leaves(a, f), ...); }, e.args());
}
template <class F, element T, class A>
void visit_leaves(const cast_node<T, A>& e, F&& f) {
  visit_leaves(e.arg(), f);
}
template <class F, class Op, class A, int R>
void visit_leaves(const reduce_node<Op, A, R>& e, F&& f) {
  visit_leaves(e.arg(), f);
}
template <class F, class A>
void visit_leaves(const transpose_node<A>& e, F&& f) {
  visit_leaves(e.arg(), f);
}
template <class F, class A, int N>
void visit_leaves(const reshape_node<A, N>& e, F&& f) {
  visit_leaves(e.arg(), f);
}
template <class F, class A, class B>
void visit_leaves(const dot_node<A, B>& e, F&& f) {
  visit_leaves(e.lhs(), f);
  visit_leaves(e.rhs(), f);
}

/// Identities of the shared variables an expression reads.
template <class X>
std::vector<std::uint64_t> shared_reads(const X& e) {
  std::vector<std::uint64_t> ids;
  visit_leaves(e, [&](const auto& leaf) {
    if constexpr (requires { leaf.variable(); }) ids.push_back(leaf.variable().id());
  });
  return ids;
}

/// Whether an expression's value has the same element at index i as its
/// operands at index i for every operand (no reduction, permutation, reshape
/// or dot anywhere): the static half of the in-place decision.
template <class X>
inline constexpr bool is_elementwise_v = false;
template <class T, int N>
inline constexpr bool is_elementwise_v<input<T, N>> = true;
template <class T>
inline constexpr bool is_elementwise_v<shared_leaf<T>> = true;
template <element E>
inline constexpr bool is_elementwise_v<constant<E>> = true;
template <class Fn, class R, class Casts, class... A>
inline constexpr bool is_elementwise_v<map_node<Fn, R, Casts, A...>> = (is_elementwise_v<A> && ...);
template <element T, class A>
inline constexpr bool is_elementwise_v<cast_node<T, A>> = is_elementwise_v<A>;

/// The broadcastable pattern (Theano's) an expression has, right-aligned to
/// `rank` axes: axis d is broadcastable when every operand that has it is.
/// Reductions with keepdims make their reduced axes broadcastable.
template <class X>
std::vector<bool> broadcastable_pattern(const X& e, std::size_t rank);

namespace detail {
template <class X>
void pattern_into(const X& e, std::vector<bool>& p);

inline void and_right_aligned(std::vector<bool>& p, const std::vector<bool>& q) {
  const std::size_t r = p.size(), s = q.size();
  for (std::size_t i = 0; i < s && i < r; ++i) p[r - 1 - i] = p[r - 1 - i] && q[s - 1 - i];
}
}  // namespace detail

template <class X>
std::vector<bool> broadcastable_pattern(const X& e, std::size_t rank) {
  std::vector<bool> p(rank, true);
  detail::pattern_into(e, p);
  return p;
}

namespace detail {
template <class X>
void pattern_into(const X& e, std::vector<bool>& p) {
  if constexpr (requires { e.variable(); }) {
    const auto& v = e.variable();
    std::vector<bool> q = v.broadcastable();
    and_right_aligned(p, q);
  } else if constexpr (requires { e.same_as(e); }) {
    std::vector<bool> q(static_cast<std::size_t>(X::rank));
    for (std::size_t d = 0; d < q.size(); ++d) q[d] = e.broadcastable(d);
    and_right_aligned(p, q);
  } else if constexpr (requires { e.value(); }) {
    // a constant broadcasts everywhere
  } else if constexpr (requires { e.args(); }) {
    std::apply([&](const auto&... a) { (pattern_into(a, p), ...); }, e.args());
  } else if constexpr (requires { e.keeps_dims(); }) {
    if (!e.keeps_dims()) {
      std::fill(p.begin(), p.end(), false);  // a different rank: nothing is known
      return;
    }
    std::vector<bool> q = broadcastable_pattern(e.arg(), p.size());
    if (e.all_axes()) std::fill(q.begin(), q.end(), true);
    else
      for (int i = 0; i < e.axis_count(); ++i) {
        const int r = static_cast<int>(q.size());
        const int a = e.axis(i) < 0 ? e.axis(i) + r : e.axis(i);
        if (a >= 0 && a < r) q[static_cast<std::size_t>(a)] = true;
      }
    and_right_aligned(p, q);
  } else if constexpr (requires { e.arg(); }) {
    // cast keeps the pattern; transpose and reshape lose what we know
    if constexpr (requires { e.reverses(); } || requires { e.extent(0); }) std::fill(p.begin(), p.end(), false);
    else pattern_into(e.arg(), p);
  } else {
    std::fill(p.begin(), p.end(), false);  // dot
  }
}
}  // namespace detail

}  // namespace fusor

namespace fusor {

/// A fixed-capacity list of tokens that identifies a computation: the node
/// types, the identities of the inputs and shared variables it reads, its
/// constants (bit for bit) and its axes. Two sub-expressions with equal tokens
/// compute the same value within one evaluation, so a temporary computed for
/// one (a dot, a reduction) can serve the other. Overflow means "unknown".
struct token_sink {
  static constexpr std::size_t capacity = 48;
  std::array<std::uint64_t, capacity> tokens{};
  std::size_t count = 0;
  bool overflow = false;
  void push(std::uint64_t v) noexcept {
    if (count == capacity) overflow = true;
    else tokens[count++] = v;
  }
  bool operator==(const token_sink& o) const noexcept {
    if (overflow || o.overflow || count != o.count) return false;
    for (std::size_t i = 0; i < count; ++i)
      if (tokens[i] != o.tokens[i]) return false;
    return true;
  }
};

namespace detail {
// type_tag<X> (memory/buffer.hpp): one address per type.
template <class X>
std::uint64_t tag_of() noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&type_tag<X>));
}
}  // namespace detail

template <class T, int N>
void structural_tokens(const input<T, N>& e, token_sink& s) {
  s.push(detail::tag_of<input<T, N>>());
  s.push(e.id());
}
template <class T>
void structural_tokens(const shared_leaf<T>& e, token_sink& s) {
  s.push(detail::tag_of<shared_leaf<T>>());
  s.push(e.variable().id());
}
template <element E>
void structural_tokens(const constant<E>& e, token_sink& s) {
  s.push(detail::tag_of<constant<E>>());
  std::uint64_t bits = 0;
  const E v = e.value();
  std::memcpy(&bits, &v, sizeof(E));
  s.push(bits);
}
template <class Fn, class R, class Casts, class... A>
void structural_tokens(const map_node<Fn, R, Casts, A...>& e, token_sink& s) {
  s.push(detail::tag_of<map_node<Fn, R, Casts, A...>>());
  std::apply([&](const auto&... a) { (structural_tokens(a, s), ...); }, e.args());
}
template <element T, class A>
void structural_tokens(const cast_node<T, A>& e, token_sink& s) {
  s.push(detail::tag_of<cast_node<T, A>>());
  structural_tokens(e.arg(), s);
}
template <class Op, class A, int R>
void structural_tokens(const reduce_node<Op, A, R>& e, token_sink& s) {
  s.push(detail::tag_of<reduce_node<Op, A, R>>());
  s.push(static_cast<std::uint64_t>(e.axis_count()) | (e.keeps_dims() ? 1ull << 32 : 0));
  for (int i = 0; i < e.axis_count(); ++i) s.push(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.axis(i))));
  structural_tokens(e.arg(), s);
}
template <class A>
void structural_tokens(const transpose_node<A>& e, token_sink& s) {
  s.push(detail::tag_of<transpose_node<A>>());
  s.push(static_cast<std::uint64_t>(e.count()));
  for (int i = 0; i < e.count(); ++i) s.push(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.perm(i))));
  structural_tokens(e.arg(), s);
}
template <class A, int N>
void structural_tokens(const reshape_node<A, N>& e, token_sink& s) {
  s.push(detail::tag_of<reshape_node<A, N>>());
  for (int i = 0; i < N; ++i) s.push(static_cast<std::uint64_t>(e.extent(i)));
  structural_tokens(e.arg(), s);
}
template <class A, class B>
void structural_tokens(const dot_node<A, B>& e, token_sink& s) {
  s.push(detail::tag_of<dot_node<A, B>>());
  structural_tokens(e.lhs(), s);
  structural_tokens(e.rhs(), s);
}

}  // namespace fusor
