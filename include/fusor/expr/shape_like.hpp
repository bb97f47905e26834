// fusor/expr/shape_like.hpp — nodes that read another expression's shape
// (never its values), and the gate. They are what a gradient is built from
// where the shapes are known only when the function is planned:
//
//   sum_to(g, like)        g summed over the axes it has beyond like's shape
//                          (broadcasting, reversed) and broadcast up where
//                          like is larger: a value of like's shape
//   reshape_like(g, like)  g reshaped to like's shape
//   size_ratio<T>(a, b)    elements of a / elements of b, as T (1/n of a mean)
//   zeros_of<T>(like)      zeros of like's shape, read from no memory
//   gate(c, on)            c, or a rank-0 zero that reads nothing (decided
//                          when the expression is built)
//
// `like` is never computed for its shape: the planner infers shapes from the
// arguments and the shared variables alone.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"
#include "fusor/expr/reduction.hpp"

namespace fusor {

/// g summed (and broadcast) to like's shape. A reduction: `operation` makes
/// the backends compile it as the sum of g over run-time axes.
template <class G, class Like>
class sum_to_node : public expression_base {
 public:
  using value_type = value_type_t<G>;
  using operation = red::sum;
  static constexpr int rank = Like::rank;

  FUSOR_PLUMBING sum_to_node(G g, Like like) : arg_(FUSOR_MOVE(g)), like_(FUSOR_MOVE(like)) {}
  FUSOR_PLUMBING const G& arg() const noexcept { return arg_; }
  const Like& like() const noexcept { return like_; }

  // The node protocol (expr/node.hpp): g fused into the sum; like for its shape.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<G>;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_, like_); }
  template <class H, class HL>
  auto remake(H g, HL like) const {
    return sum_to_node<H, HL>(FUSOR_MOVE(g), FUSOR_MOVE(like));
  }
  std::string str() const { return detail::sum_to_text(arg_.str(), like_.str()); }

 private:
  G arg_;
  Like like_;
};

/// g reshaped to like's shape (the element count must agree).
template <class G, class Like>
class reshape_like_node : public expression_base {
 public:
  using value_type = value_type_t<G>;
  static constexpr int rank = Like::rank;

  FUSOR_PLUMBING reshape_like_node(G g, Like like) : arg_(FUSOR_MOVE(g)), like_(FUSOR_MOVE(like)) {}
  FUSOR_PLUMBING const G& arg() const noexcept { return arg_; }
  const Like& like() const noexcept { return like_; }

  // The node protocol (expr/node.hpp): g in memory; like for its shape.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<G>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_, like_); }
  template <class H, class HL>
  auto remake(H g, HL like) const {
    return reshape_like_node<H, HL>(FUSOR_MOVE(g), FUSOR_MOVE(like));
  }
  std::string str() const { return detail::reshape_like_text(arg_.str(), like_.str()); }

 private:
  G arg_;
  Like like_;
};

/// The element count of `num` divided by that of `den`, as T: a rank-0 value
/// known once the plan's shapes are.
template <element T, class Num, class Den>
class size_ratio_node : public expression_base {
 public:
  using value_type = T;
  static constexpr int rank = 0;

  FUSOR_PLUMBING size_ratio_node(Num num, Den den) : num_(FUSOR_MOVE(num)), den_(FUSOR_MOVE(den)) {}
  const Num& numerator() const noexcept { return num_; }
  const Den& denominator() const noexcept { return den_; }

  // The node protocol (expr/node.hpp): both read for their shapes only.
  static constexpr bool holds = true;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(num_, den_); }
  template <class HN, class HD>
  auto remake(HN num, HD den) const {
    return size_ratio_node<T, HN, HD>(FUSOR_MOVE(num), FUSOR_MOVE(den));
  }
  std::string str() const { return detail::size_ratio_text(num_.str(), den_.str()); }

 private:
  Num num_;
  Den den_;
};

/// Zeros of like's shape that read nothing (like is never computed): what
/// broadcasts a gradient's adjoint to the shape of the node it came through.
template <element T, class Like>
class zeros_of_node : public expression_base {
 public:
  using value_type = T;
  static constexpr int rank = Like::rank;

  FUSOR_PLUMBING explicit zeros_of_node(Like like) : like_(FUSOR_MOVE(like)) {}
  const Like& like() const noexcept { return like_; }

  // The node protocol (expr/node.hpp): like read for its shape only.
  static constexpr bool holds = true;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(like_); }
  template <class HL>
  auto remake(HL like) const {
    return zeros_of_node<T, HL>(FUSOR_MOVE(like));
  }
  std::string str() const { return detail::zeros_of_text(like_.str()); }

 private:
  Like like_;
};

/// c when `on`, else a rank-0 zero of c's dtype that reads nothing: a
/// gradient's contribution through one leaf of the target's C++ type, kept
/// when that leaf is the target. The type is the same either way.
template <class C>
class gate_node : public expression_base {
 public:
  using value_type = value_type_t<C>;
  static constexpr int rank = C::rank;

  FUSOR_PLUMBING gate_node(C c, bool on) : arg_(FUSOR_MOVE(c)), on_(on) {}
  FUSOR_PLUMBING const C& arg() const noexcept { return arg_; }
  FUSOR_PLUMBING bool on() const noexcept { return on_; }

  // The node protocol (expr/node.hpp). A closed gate holds c but reads none
  // of it: the walks that follow values (leaves, keys) stop at it.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<C>;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return gate_node<H>(FUSOR_MOVE(h), on_);
  }
  void append_params(std::vector<std::uint64_t>& key) const { key.push_back(on_ ? 1 : 0); }
  std::string str() const { return detail::gate_text(on_, on_ ? arg_.str() : std::string()); }

 private:
  C arg_;
  bool on_;
};

template <class E>
inline constexpr bool is_gate_v = false;
template <class C>
inline constexpr bool is_gate_v<gate_node<C>> = true;

// The builders, used by fusor::grad (grad/); not part of the public names.
namespace detail {
template <class G, class L>
  requires(operand<G> && operand<L>)
[[nodiscard]] auto sum_to(G&& g, L&& like) {
  return sum_to_node<as_expression_t<G>, as_expression_t<L>>(FUSOR_AS_EXPRESSION(g),
                                                             FUSOR_AS_EXPRESSION(like));
}
template <class G, class L>
  requires(operand<G> && operand<L>)
[[nodiscard]] auto reshape_like(G&& g, L&& like) {
  return reshape_like_node<as_expression_t<G>, as_expression_t<L>>(FUSOR_AS_EXPRESSION(g),
                                                                   FUSOR_AS_EXPRESSION(like));
}
template <element T, class N, class D>
  requires(operand<N> && operand<D>)
[[nodiscard]] auto size_ratio(N&& num, D&& den) {
  return size_ratio_node<T, as_expression_t<N>, as_expression_t<D>>(FUSOR_AS_EXPRESSION(num),
                                                                    FUSOR_AS_EXPRESSION(den));
}
template <element T, class L>
  requires(operand<L>)
[[nodiscard]] auto zeros_of(L&& like) {
  return zeros_of_node<T, as_expression_t<L>>(FUSOR_AS_EXPRESSION(like));
}
template <class C>
[[nodiscard]] auto gated(C&& c, bool on) {
  return gate_node<as_expression_t<C>>(FUSOR_AS_EXPRESSION(c), on);
}

}  // namespace detail

}  // namespace fusor
