// fusor/expr/take.hpp — indexing by integer arrays: NumPy's take.
//
//   fusor::vector<std::int64_t> idx{"idx"};
//   auto batch = fusor::take(X, idx, 0);     // X[idx]: the rows idx names
//   auto cols  = fusor::take(W, idx, 1);     // W[:, idx]
//
// The result has shape e.shape[:axis] + indices.shape + e.shape[axis+1:].
// Negative indices count from the end, as in NumPy; an index outside the
// axis is a fusor::index_error naming the index, the axis and its length,
// raised before the call writes anything. The gathered elements are copied
// into a temporary once (whole rows at a time where e's rows are contiguous);
// what reads the result fuses as usual.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

template <class A, class I, int N>
class take_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = N;

  FUSOR_PLUMBING take_node(A arg, I indices, int axis) : arg_(FUSOR_MOVE(arg)), indices_(FUSOR_MOVE(indices)), axis_(axis) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  const I& indices() const noexcept { return indices_; }
  int axis() const noexcept { return axis_; }

  // The node protocol (expr/node.hpp): both gathered from memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A, I>;
  static constexpr unsigned from_memory = 0b11;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_, indices_); }
  template <class HA, class HI>
  auto remake(HA a, HI i) const {
    return take_node<HA, HI, N>(FUSOR_MOVE(a), FUSOR_MOVE(i), axis_);
  }
  void append_params(std::vector<std::uint64_t>& key) const { key.push_back(static_cast<std::uint64_t>(axis_)); }
  std::string str() const { return detail::take_text(arg_.str(), indices_.str(), axis_); }

 private:
  A arg_;
  I indices_;
  int axis_;
};

/// np.take(e, indices, axis): see the file comment.
template <class X, class Y>
  requires(operand<X> && operand<Y> && !element<std::remove_cvref_t<X>> && !element<std::remove_cvref_t<Y>>)
[[nodiscard]] auto take(X&& x, Y&& indices, int axis = 0) {
  using A = as_expression_t<X>;
  using I = as_expression_t<Y>;
  static_assert(std::is_integral_v<value_type_t<I>> && !std::is_same_v<value_type_t<I>, bool>,
                "fusor::take: the indices must be an integer expression (a boolean mask selects with where)");
  static_assert(A::rank == dynamic_rank || A::rank >= 1, "fusor::take: a rank-0 operand has no axis to index");
  constexpr int N = A::rank == dynamic_rank || I::rank == dynamic_rank ? dynamic_rank : A::rank - 1 + I::rank;
  static_assert(N == dynamic_rank || N <= max_rank, "fusor::take: the result's rank exceeds FUSOR_MAX_RANK");
  return take_node<A, I, N>(FUSOR_AS_EXPRESSION(x), FUSOR_AS_EXPRESSION(indices), axis);
}

}  // namespace fusor
