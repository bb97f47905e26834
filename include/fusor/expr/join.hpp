// fusor/expr/join.hpp — arrays assembled from parts: concatenate, stack, roll
// and pad (NumPy's), each one node whose value is built in a temporary.
//
//   auto both  = fusor::concatenate(std::tuple(a, b), 0);   // np.concatenate((a, b), 0)
//   auto same  = fusor::concatenate({W1, W2}, 1);           // parts of one C++ type
//   auto layer = fusor::stack(std::tuple(x, y), 0);         // np.stack((x, y))
//   auto rows  = fusor::stack({x, y}, 0);                   // parts of one C++ type
//   auto left  = fusor::roll(u, -1, 1);                     // np.roll(u, -1, axis=1)
//   auto grown = fusor::pad(u, {{1, 1}, {2, 0}}, 0.0);      // np.pad(u, ((1, 1), (2, 0)))
//   auto edged = fusor::pad(u, 1, fusor::edge);             // np.pad(u, 1, mode="edge")
//
// Each part is read from memory (a shared variable or an input in place, a
// compound part computed once into a temporary) and moved into its region of
// the result: at most two moves per part, and for a pad, fills of the border
// (constant) or copies of the edge slab, axis after axis (edge: NumPy's order,
// so corners take the corner's value). Every part must have the result's
// dtype (convert with fusor::cast<T>); at most max_arity parts.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/apply.hpp"
#include "fusor/core/config.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/view.hpp"

namespace fusor {

enum class join_kind : std::uint8_t { concatenate, roll, pad_constant, pad_edge };

/// What a join node does, as plain data (the graph keeps a copy).
struct join_params {
  join_kind kind = join_kind::concatenate;
  int axis = 0;
  index_t shift = 0;                           ///< roll
  int widths = 0;                              ///< pad: 1 (every axis) or the rank
  std::array<index_t, max_rank> before{}, after{};
  std::uint64_t fill = 0;                      ///< pad_constant: the value's bits
  friend bool operator==(const join_params&, const join_params&) = default;

  void append_key(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(kind));
    key.push_back(static_cast<std::uint64_t>(axis));
    key.push_back(static_cast<std::uint64_t>(shift));
    key.push_back(static_cast<std::uint64_t>(widths));
    for (int i = 0; i < widths; ++i) {
      key.push_back(static_cast<std::uint64_t>(before[static_cast<std::size_t>(i)]));
      key.push_back(static_cast<std::uint64_t>(after[static_cast<std::size_t>(i)]));
    }
    key.push_back(fill);
  }
};

namespace detail {
/// `concatenate((a, b), 0)`, `roll(a, 2, 0)`, `pad(a, ((1, 2)), edge)`,
/// `pad(a, ((1, 2)), 0.5)`: `parts` is the parts' texts joined by ", ",
/// `fill` a constant pad's value as written.
inline std::string join_text(const std::string& parts, const join_params& p, const std::string& fill) {
  switch (p.kind) {
    case join_kind::concatenate: return "concatenate((" + parts + "), " + std::to_string(p.axis) + ")";
    case join_kind::roll: return "roll(" + parts + ", " + std::to_string(p.shift) + ", " + std::to_string(p.axis) + ")";
    case join_kind::pad_constant:
    case join_kind::pad_edge: {
      std::string w;
      for (int i = 0; i < p.widths; ++i)
        w += std::string(i ? ", " : "") + "(" + std::to_string(p.before[static_cast<std::size_t>(i)]) + ", " +
             std::to_string(p.after[static_cast<std::size_t>(i)]) + ")";
      return "pad(" + parts + ", (" + w + "), " + (p.kind == join_kind::pad_edge ? std::string("edge") : fill) + ")";
    }
  }
  return "?";
}
}  // namespace detail

/// The edge mode of pad (np.pad(..., mode="edge")).
struct edge_t {
  explicit constexpr edge_t(int) {}
};
inline constexpr edge_t edge{0};

/// A node assembled from the parts A... (see the file comment).
template <int N, class... A>
class join_node : public expression_base {
  static_assert(sizeof...(A) >= 1);

 public:
  using value_type = value_type_t<std::tuple_element_t<0, std::tuple<A...>>>;
  static constexpr int rank = N;
  static_assert((std::is_same_v<value_type_t<A>, value_type> && ...),
                "FUSOR_JOIN_DTYPE_MISMATCH: the parts of concatenate / stack must have one dtype; convert them "
                "with fusor::cast<T>(...)");

  FUSOR_PLUMBING join_node(const join_params& p, A... parts) : parts_(FUSOR_MOVE(parts)...), params_(p) {}
  FUSOR_PLUMBING const detail::operand_tuple<A...>& args() const noexcept { return parts_; }
  const join_params& join() const noexcept { return params_; }

  // The node protocol (expr/node.hpp): its parts, each moved from memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A...>;
  static constexpr unsigned from_memory = (1u << sizeof...(A)) - 1;
  FUSOR_PLUMBING const detail::operand_tuple<A...>& held() const noexcept { return parts_; }
  template <class... H>
  auto remake(H... h) const {
    return join_node<N, H...>(params_, FUSOR_MOVE(h)...);
  }
  void append_params(std::vector<std::uint64_t>& key) const { params_.append_key(key); }

  std::string str() const {
    std::string parts;
    [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      ((parts += (parts.empty() ? "" : ", ") + detail::get<K>(parts_).str()), ...);
    }(std::index_sequence_for<A...>{});
    return detail::join_text(parts, params_, fill_text(params_));
  }
  /// A constant pad's value as written (empty for the other joins).
  static std::string fill_text(const join_params& p) {
    if (p.kind != join_kind::pad_constant) return {};
    value_type v{};
    std::memcpy(&v, &p.fill, sizeof v);
    return constant<value_type>(v).str();
  }

 private:
  detail::operand_tuple<A...> parts_;
  join_params params_;
};

namespace detail {
template <class... X>
inline constexpr int join_rank() {
  constexpr int ranks[] = {as_expression_t<X>::rank...};
  for (int r : ranks)
    if (r == dynamic_rank) return dynamic_rank;
  return ranks[0];
}
template <class X, class... S>
auto stacked_part(X&& x, int axis) {
  using E = as_expression_t<X>;
  view_spec spec;
  for (int d = 0; d < axis; ++d) spec.items[static_cast<std::size_t>(spec.count++)] = to_item(all);
  spec.items[static_cast<std::size_t>(spec.count++)] = to_item(newaxis);
  return view_node<E, E::rank + 1>(FUSOR_AS_EXPRESSION(x), spec);
}
}  // namespace detail

/// np.concatenate(parts, axis): parts as a std::tuple of expressions or
/// shared variables (`std::tuple(a, b)`), of one rank and dtype, equal
/// extents except along `axis`.
template <class... X>
  requires(sizeof...(X) >= 1 && (operand<X> && ...))
[[nodiscard]] auto concatenate(std::tuple<X...> parts, int axis = 0) {
  static_assert(sizeof...(X) <= 8, "fusor::concatenate: at most 8 parts (concatenate the results again for more)");
  join_params p;
  p.kind = join_kind::concatenate;
  p.axis = axis;
  return fusor::detail::apply(
      [&](auto&&... x) {
        return join_node<detail::join_rank<X...>(), as_expression_t<X>...>(p, FUSOR_AS_EXPRESSION(x)...);
      },
      FUSOR_MOVE(parts));
}
/// np.concatenate of parts of one C++ type: concatenate({W1, W2, W3}, 0).
template <class X, std::size_t K>
  requires(operand<X>)
[[nodiscard]] auto concatenate(const X (&parts)[K], int axis = 0) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return concatenate(std::tuple<decltype((void)I, parts[0])...>(parts[I]...), axis);
  }(std::make_index_sequence<K>{});
}

/// np.stack(parts, axis): the parts (of one shape) along a new axis.
template <class... X>
  requires(sizeof...(X) >= 1 && (operand<X> && ...))
[[nodiscard]] auto stack(std::tuple<X...> parts, int axis = 0) {
  constexpr int r = detail::join_rank<X...>();
  static_assert(r != dynamic_rank, "fusor::stack: the parts need a static rank");
  if (axis < 0) axis += r + 1;
  if (axis < 0 || axis > r)
    throw index_error("fusor::stack: axis is out of bounds for parts of rank " + std::to_string(r));
  return fusor::detail::apply([&](auto&&... x) { return concatenate(std::tuple(detail::stacked_part(FUSOR_MOVE(x), axis)...), axis); },
                    FUSOR_MOVE(parts));
}

/// np.stack of parts of one C++ type: stack({x, y}, 0).
template <class X, std::size_t K>
  requires(operand<X>)
[[nodiscard]] auto stack(const X (&parts)[K], int axis = 0) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return stack(std::tuple<decltype((void)I, parts[0])...>(parts[I]...), axis);
  }(std::make_index_sequence<K>{});
}

/// np.roll(e, shift, axis): elements shifted by `shift` along `axis`, those
/// leaving one end entering at the other.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto roll(X&& x, index_t shift, int axis) {
  using E = as_expression_t<X>;
  join_params p;
  p.kind = join_kind::roll;
  p.axis = axis;
  p.shift = shift;
  return join_node<E::rank, E>(p, FUSOR_AS_EXPRESSION(x));
}

namespace detail {
template <class X>
auto padded(X&& x, std::initializer_list<std::array<index_t, 2>> widths, join_params p) {
  using E = as_expression_t<X>;
  if (widths.size() > max_rank) throw rank_error("fusor::pad: more widths than FUSOR_MAX_RANK");
  for (const auto& w : widths) {
    if (w[0] < 0 || w[1] < 0)
      throw value_error("fusor::pad: pad widths must be non-negative, got (" + std::to_string(w[0]) + ", " +
                        std::to_string(w[1]) + ")");
    p.before[static_cast<std::size_t>(p.widths)] = w[0];
    p.after[static_cast<std::size_t>(p.widths)] = w[1];
    ++p.widths;
  }
  return join_node<E::rank, E>(p, FUSOR_AS_EXPRESSION(x));
}
}  // namespace detail

/// np.pad(e, widths, constant_values=value): `widths` per axis ({before,
/// after} each), or one pair for every axis.
template <class X, element V>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto pad(X&& x, std::initializer_list<std::array<index_t, 2>> widths, V value) {
  using T = value_type_t<as_expression_t<X>>;
  join_params p;
  p.kind = join_kind::pad_constant;
  const T v = static_cast<T>(value);
  std::memcpy(&p.fill, &v, sizeof v);
  return detail::padded(FUSOR_FORWARD(x), widths, p);
}
/// np.pad(e, width, constant_values=value): `width` on both sides of every axis.
template <class X, element V>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto pad(X&& x, index_t width, V value) {
  return pad(FUSOR_FORWARD(x), {{width, width}}, value);
}
/// np.pad(e, widths, mode="edge").
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto pad(X&& x, std::initializer_list<std::array<index_t, 2>> widths, edge_t) {
  join_params p;
  p.kind = join_kind::pad_edge;
  return detail::padded(FUSOR_FORWARD(x), widths, p);
}
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto pad(X&& x, index_t width, edge_t e) {
  return pad(FUSOR_FORWARD(x), {{width, width}}, e);
}

}  // namespace fusor
