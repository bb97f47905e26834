// fusor/expr/shape_ops.hpp — transpose / axis permutation and reshape. On a
// leaf they are views (no copy); on a compound expression the operand is
// materialised first. Read through a permutation, a destination that is also
// an operand always goes through a temporary.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

/// Axis permutation: result axis i is operand axis perm[i].
template <class A>
class transpose_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = A::rank;

  /// `count == 0` means "reverse all axes" (NumPy's x.T).
  transpose_node(A arg, std::array<int, max_rank> perm, int count)
      : arg_(FUSOR_MOVE(arg)), perm_(perm), count_(count) {}

  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  bool reverses() const noexcept { return count_ == 0; }
  int count() const noexcept { return count_; }
  int perm(int i) const noexcept { return perm_[static_cast<std::size_t>(i)]; }

  // The node protocol (expr/node.hpp): a strided view of its operand, in memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return transpose_node<H>(FUSOR_MOVE(h), perm_, count_);
  }
  void append_params(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(count_));
    for (int i = 0; i < count_; ++i) key.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(perm(i))));
  }

  std::string str() const { return detail::transpose_text(arg_.str(), count_, perm_.data()); }

 private:
  A arg_;
  std::array<int, max_rank> perm_;
  int count_;
};

/// Reshape to N axes; one extent may be -1 (inferred), as in NumPy.
template <class A, int N>
class reshape_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = N;

  FUSOR_PLUMBING reshape_node(A arg, std::array<index_t, max_rank> shape) : arg_(FUSOR_MOVE(arg)), shape_(shape) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  index_t extent(int i) const noexcept { return shape_[static_cast<std::size_t>(i)]; }

  // The node protocol (expr/node.hpp): its operand, in memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return reshape_node<H, N>(FUSOR_MOVE(h), shape_);
  }
  void append_params(std::vector<std::uint64_t>& key) const {
    for (int i = 0; i < N; ++i) key.push_back(static_cast<std::uint64_t>(extent(i)));
  }

  std::string str() const { return detail::shaped_text("reshape", arg_.str(), N, shape_.data()); }

 private:
  A arg_;
  std::array<index_t, max_rank> shape_;
};

/// Reverses the axes (x.T).
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto transpose(X&& x) {
  return transpose_node<as_expression_t<X>>(FUSOR_AS_EXPRESSION(x), {}, 0);
}

/// Permutes the axes: transpose(x, {1, 0, 2}).
template <class X, std::size_t K>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto transpose(X&& x, const int (&perm)[K]) {
  using A = as_expression_t<X>;
  static_assert(A::rank == dynamic_rank || static_cast<int>(K) == A::rank,
                "fusor::transpose: the permutation must list every axis of the expression exactly once");
  std::array<int, max_rank> p{};
  for (std::size_t i = 0; i < K; ++i) p[i] = perm[i];
  return transpose_node<A>(FUSOR_AS_EXPRESSION(x), p, static_cast<int>(K));
}

/// Reshapes: reshape(x, {2, -1}). The element count must not change.
template <class X, std::size_t N>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto reshape(X&& x, const index_t (&shape)[N]) {
  static_assert(N <= max_rank, "fusor::reshape: rank exceeds FUSOR_MAX_RANK");
  std::array<index_t, max_rank> s{};
  for (std::size_t i = 0; i < N; ++i) s[i] = shape[i];
  return reshape_node<as_expression_t<X>, static_cast<int>(N)>(FUSOR_AS_EXPRESSION(x), s);
}

/// np.diagonal(e, offset, axis1, axis2): the diagonal of the (axis1, axis2)
/// planes as the last axis (offset > 0 above the main diagonal). On a value in
/// memory it is a view (one stride: the sum of the two axes'), no copy.
template <class A>
class diagonal_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = A::rank == dynamic_rank ? dynamic_rank : A::rank - 1;

  diagonal_node(A arg, index_t offset, int axis1, int axis2)
      : arg_(FUSOR_MOVE(arg)), offset_(offset), axis1_(axis1), axis2_(axis2) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  index_t offset() const noexcept { return offset_; }
  int axis1() const noexcept { return axis1_; }
  int axis2() const noexcept { return axis2_; }

  // The node protocol (expr/node.hpp): a strided view of its operand, in memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return diagonal_node<H>(FUSOR_MOVE(h), offset_, axis1_, axis2_);
  }
  void append_params(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(offset_));
    key.push_back(static_cast<std::uint64_t>(axis1_));
    key.push_back(static_cast<std::uint64_t>(axis2_));
  }
  std::string str() const { return detail::diagonal_text(arg_.str(), offset_, axis1_, axis2_); }

 private:
  A arg_;
  index_t offset_;
  int axis1_, axis2_;
};

template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto diagonal(X&& x, index_t offset = 0, int axis1 = 0, int axis2 = 1) {
  using A = as_expression_t<X>;
  static_assert(A::rank == dynamic_rank || A::rank >= 2, "fusor::diagonal: the operand needs at least two axes");
  return diagonal_node<A>(FUSOR_AS_EXPRESSION(x), offset, axis1, axis2);
}

/// Theano's specify_shape: e, whose shape is checked against `shape` when the
/// expression is evaluated (an extent of -1 matches any). A mismatch is a
/// shape_error naming both shapes, before anything is written. On a shared
/// variable or an input it costs nothing; a compound e is computed once into
/// a temporary.
template <class A>
class specify_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = A::rank;
  specify_node(A arg, std::array<index_t, max_rank> shape, int count)
      : arg_(FUSOR_MOVE(arg)), shape_(shape), count_(count) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  int count() const noexcept { return count_; }
  index_t extent(int i) const noexcept { return shape_[static_cast<std::size_t>(i)]; }
  std::string str() const { return detail::shaped_text("specify_shape", arg_.str(), count_, shape_.data()); }

  // The node protocol (expr/node.hpp): its operand, in memory (checked, then read as it is).
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return specify_node<H>(FUSOR_MOVE(h), shape_, count_);
  }
  void append_params(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(count_));
    for (int i = 0; i < count_; ++i) key.push_back(static_cast<std::uint64_t>(extent(i)));
  }

 private:
  A arg_;
  std::array<index_t, max_rank> shape_;
  int count_;
};

template <class X, std::size_t N>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto specify_shape(X&& x, const index_t (&shape)[N]) {
  using A = as_expression_t<X>;
  static_assert(A::rank == dynamic_rank || static_cast<int>(N) == A::rank,
                "fusor::specify_shape: the shape must have the expression's rank");
  std::array<index_t, max_rank> s{};
  for (std::size_t i = 0; i < N; ++i) s[i] = shape[i];
  return specify_node<A>(FUSOR_AS_EXPRESSION(x), s, static_cast<int>(N));
}

}  // namespace fusor
