// fusor/expr/dot.hpp — dot products (vector·vector, matrix·vector,
// vector·matrix, matrix·matrix), computed by BLAS for float and double. A dot
// node is never fused: its operands and its result are materialised.
#pragma once

#include <string>

#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

template <class A, class B>
class dot_node : public expression_base {
 public:
  using value_type = detail::promoted_t<A, B>;
  static constexpr int rank = (A::rank == dynamic_rank || B::rank == dynamic_rank)
                                  ? dynamic_rank
                                  : (A::rank == 1 && B::rank == 1 ? 0 : (A::rank == 2 && B::rank == 2 ? 2 : 1));

  FUSOR_PLUMBING dot_node(A a, B b) : a_(FUSOR_MOVE(a)), b_(FUSOR_MOVE(b)) {}
  const A& lhs() const noexcept { return a_; }
  const B& rhs() const noexcept { return b_; }

  // The node protocol (expr/node.hpp): both operands read from memory (by BLAS).
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A, B>;
  static constexpr unsigned from_memory = 0b11;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(a_, b_); }
  template <class HA, class HB>
  auto remake(HA a, HB b) const {
    return dot_node<HA, HB>(FUSOR_MOVE(a), FUSOR_MOVE(b));
  }
  std::string str() const { return detail::dot_text(a_.str(), b_.str()); }

 private:
  A a_;
  B b_;
};

template <class X, class Y>
  requires(operand<X> && operand<Y> && !element<std::remove_cvref_t<X>> && !element<std::remove_cvref_t<Y>>)
[[nodiscard]] auto dot(X&& x, Y&& y) {
  using A = as_expression_t<X>;
  using B = as_expression_t<Y>;
  static_assert((A::rank == dynamic_rank || A::rank == 1 || A::rank == 2) &&
                    (B::rank == dynamic_rank || B::rank == 1 || B::rank == 2),
                "FUSOR_DOT_RANK: fusor::dot: operands must be vectors or matrices (rank 1 or 2); multiply by a "
                "scalar with *, and reshape a higher-rank operand to a matrix first (fusor::reshape)");
  return dot_node<A, B>(FUSOR_AS_EXPRESSION(x), FUSOR_AS_EXPRESSION(y));
}

}  // namespace fusor
