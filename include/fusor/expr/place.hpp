// fusor/expr/place.hpp — the adjoint of a selection: a value put back where a
// view, a diagonal, a join or a take found it.
//
//   place(g, view(x, ...))            zeros of x's shape, g written into the region the view reads
//   place(g, diagonal(x, ...))        zeros of x's shape, g written along the diagonal
//   place<K>(g, concatenate(...))     the piece of g that part K of the join became
//                                     (concatenate, stack, roll, constant pad)
//   place(g, take(x, idx, axis))      zeros of x's shape, g's slabs *added* at the rows idx
//                                     names (an index named twice receives both)
//
// These are what fusor::grad (grad/) builds where a target is read through a
// selection; they are not public names. The forward node is held for its
// parameters and for the shapes the plan infers for its operands: it is never
// computed for a place. The result is built in a temporary: by moves (the
// assemble step joins use) for views, diagonals and joins, by a scatter-add
// step for take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/expr/join.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/view.hpp"

namespace fusor {

namespace detail {
template <class F>
const auto& unref(const F& f) noexcept {
  if constexpr (is_ref_v<F>) return f.target();
  else return f;
}
/// Operand K of a forward selection node: its arg(), or part K of a join.
template <std::size_t K, class F>
const auto& selected_from(const F& f) noexcept {
  if constexpr (has<member::join, F>) return detail::get<K>(f.args());
  else return f.arg();
}
}  // namespace detail

/// G put back where the forward selection F (a view, diagonal, join or take
/// node, or a reference to one) took it from operand K: a value of that
/// operand's shape.
template <class G, class F, std::size_t K = 0>
class place_node : public expression_base {
  using forward_type = std::remove_cvref_t<decltype(detail::unref(std::declval<const F&>()))>;
  using like_type = std::remove_cvref_t<decltype(detail::selected_from<K>(std::declval<const forward_type&>()))>;

 public:
  using value_type = value_type_t<G>;
  static constexpr int rank = like_type::rank;
  static constexpr std::size_t part = K;

  FUSOR_PLUMBING place_node(G g, F forward) : arg_(FUSOR_MOVE(g)), forward_(FUSOR_MOVE(forward)) {}
  FUSOR_PLUMBING const G& arg() const noexcept { return arg_; }
  /// The forward selection, as held (a reference, usually).
  const F& forward_held() const noexcept { return forward_; }
  const forward_type& forward() const noexcept { return detail::unref(forward_); }
  /// The operand whose shape the result has (read for its shape only).
  const like_type& like() const noexcept { return detail::selected_from<K>(forward()); }
  /// Whether the adjoint is added (take: indices may repeat), not written.
  static constexpr bool accumulates = detail::has<detail::member::indices, forward_type>;

  // The node protocol (expr/node.hpp): g read from memory; the forward
  // selection for its parameters, its operands' shapes and a take's indices.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<G>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_, forward_); }
  template <class H, class HF>
  auto remake(H g, HF forward) const {
    return place_node<H, HF, K>(FUSOR_MOVE(g), FUSOR_MOVE(forward));
  }
  void append_params(std::vector<std::uint64_t>& key) const { key.push_back(K); }

  /// Which part of a join it places (-1: not a join's).
  static constexpr int join_part = detail::has<detail::member::join, forward_type> ? static_cast<int>(K) : -1;
  std::string str() const { return detail::place_text(arg_.str(), join_part, forward().str()); }

 private:
  G arg_;
  F forward_;
};

template <class X>
inline constexpr bool is_place_v = false;
template <class G, class F, std::size_t K>
inline constexpr bool is_place_v<place_node<G, F, K>> = true;

namespace detail {
/// place<K>(g, forward): see the file comment. `forward` is held by reference.
template <std::size_t K = 0, class G, class F>
[[nodiscard]] auto place(G&& g, const F& forward) {
  using R = decltype(ref(forward));
  return place_node<as_expression_t<G>, R, K>(FUSOR_AS_EXPRESSION(g), ref(forward));
}
}  // namespace detail

}  // namespace fusor
