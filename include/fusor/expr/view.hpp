// fusor/expr/view.hpp — views: NumPy's basic indexing, lazily.
//
//   using fusor::range, fusor::_, fusor::all, fusor::newaxis;
//   auto inner = fusor::view(u, range(1, -1), range(1, -1));   // u[1:-1, 1:-1]
//   auto left  = fusor::view(u, range(1, -1), range(_, -2));   // u[1:-1, :-2]
//   auto rev   = fusor::view(x, range(_, _, -1));              // x[::-1]
//   auto row   = fusor::view(m, 2);                            // m[2]     (drops the axis)
//   auto col   = fusor::view(v, all, newaxis);                 // v[:, None]
//
// A view of a shared variable or an input reads the variable's (or the
// argument's) buffer with an offset and strides inside the fused kernel: no
// copy. A view of a compound expression reads it from a temporary the
// expression is computed into once. Bounds follow NumPy: negative ones count
// from the end, ranges are clamped, an integer index out of range is a
// fusor::index_error naming the index, the axis and its length. Axes not
// named are kept whole, as in NumPy.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

/// An omitted bound of a range (NumPy's empty slot in `x[:3]`).
struct placeholder_t {
  explicit constexpr placeholder_t(int) {}
};
inline constexpr placeholder_t _{0};

/// One item of an index: a range, one index (the axis is dropped) or a new
/// axis of length 1.
struct slice_item {
  enum kind_t : std::uint8_t { range, index, newaxis };
  kind_t kind = range;
  bool has_start = false, has_stop = false;
  index_t start = 0, stop = 0, step = 1;

  friend bool operator==(const slice_item&, const slice_item&) = default;

  /// As NumPy prints it: "1:-1", "::-1", "2", "None".
  std::string str() const {
    if (kind == index) return std::to_string(start);
    if (kind == newaxis) return "None";
    std::string s;  // appended piece by piece: GCC 12 warns, wrongly, about a chain of + here
    if (has_start) s.append(std::to_string(start));
    s.append(":");
    if (has_stop) s.append(std::to_string(stop));
    if (step != 1) s.append(":").append(std::to_string(step));
    return s;
  }
};

namespace detail {
constexpr slice_item make_range(bool has_start, index_t start, bool has_stop, index_t stop, index_t step) {
  slice_item s;
  s.kind = slice_item::range;
  s.has_start = has_start;
  s.start = start;
  s.has_stop = has_stop;
  s.stop = stop;
  s.step = step;
  return s;
}
template <class B>
constexpr bool bound_given() {
  return !std::is_same_v<std::remove_cvref_t<B>, placeholder_t>;
}
template <class B>
constexpr index_t bound_value(const B& b) {
  if constexpr (bound_given<B>()) return static_cast<index_t>(b);
  else return 0;
}
// One constant per constraint (see core/dtype.hpp on GCC 12 and disjunctions).
template <class B>
inline constexpr bool is_bound_v = std::is_same_v<B, placeholder_t> || (std::is_integral_v<B> && !std::is_same_v<B, bool>);
template <class Start, class Stop>
inline constexpr bool range_bounds_v = is_bound_v<Start> && is_bound_v<Stop>;
}  // namespace detail

/// `range(start, stop[, step])`: NumPy's `start:stop:step`; either bound may be
/// fusor::_ (omitted). `range(_, _)` is the whole axis.
template <class Start, class Stop>
  requires(detail::range_bounds_v<Start, Stop>)
constexpr slice_item range(Start start, Stop stop, index_t step = 1) {
  return detail::make_range(detail::bound_given<Start>(), detail::bound_value(start), detail::bound_given<Stop>(),
                            detail::bound_value(stop), step);
}

/// The whole axis (NumPy's `:`).
struct all_t {
  explicit constexpr all_t(int) {}
};
inline constexpr all_t all{0};
/// A new axis of length 1 (NumPy's `None` / `np.newaxis`).
struct newaxis_t {
  explicit constexpr newaxis_t(int) {}
};
inline constexpr newaxis_t newaxis{0};

namespace detail {
template <class S>
inline constexpr bool is_slice_argument_v =
    std::is_same_v<S, slice_item> || std::is_same_v<S, all_t> || std::is_same_v<S, newaxis_t> ||
    (std::is_integral_v<S> && !std::is_same_v<S, bool>);

template <class S>
slice_item to_item(const S& s) {
  if constexpr (std::is_same_v<S, slice_item>) return s;
  else if constexpr (std::is_same_v<S, all_t>) return make_range(false, 0, false, 0, 1);
  else if constexpr (std::is_same_v<S, newaxis_t>) {
    slice_item i;
    i.kind = slice_item::newaxis;
    return i;
  } else {
    slice_item i;
    i.kind = slice_item::index;
    i.start = static_cast<index_t>(s);
    return i;
  }
}

template <class X, class... S>
inline constexpr bool view_arguments_v = std::is_base_of_v<expression_base, std::remove_cvref_t<X>> ||
                                         is_shared_v<std::remove_cvref_t<X>>;
template <class X, class... S>
inline constexpr bool valid_view_v = view_arguments_v<X> && (is_slice_argument_v<S> && ...);

/// The rank of a view: the operand's, less one per integer, plus one per new axis.
template <int Rank, class... S>
constexpr int view_rank() {
  if constexpr (Rank == dynamic_rank) return dynamic_rank;
  else return Rank - ((std::is_integral_v<S> ? 1 : 0) + ... + 0) + ((std::is_same_v<S, newaxis_t> ? 1 : 0) + ... + 0);
}
}  // namespace detail

/// The items of an index, at most max_rank of them.
struct view_spec {
  std::array<slice_item, max_rank> items{};
  int count = 0;
  friend bool operator==(const view_spec&, const view_spec&) = default;
  std::string str() const {
    std::string s;
    for (int i = 0; i < count; ++i) s += (i ? ", " : "") + items[static_cast<std::size_t>(i)].str();
    return s;
  }
  /// Appends the index to a graph's cache key (one encoding for every cache).
  void append_key(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(count));
    for (int i = 0; i < count; ++i) {
      const slice_item& s = items[static_cast<std::size_t>(i)];
      key.push_back(static_cast<std::uint64_t>(s.kind) | (s.has_start ? 16u : 0u) | (s.has_stop ? 32u : 0u));
      key.push_back(static_cast<std::uint64_t>(s.start));
      key.push_back(static_cast<std::uint64_t>(s.stop));
      key.push_back(static_cast<std::uint64_t>(s.step));
    }
  }
};

/// A view of A: NumPy's basic indexing, of result rank N.
template <class A, int N>
class view_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = N;

  FUSOR_PLUMBING view_node(A arg, const view_spec& spec) : arg_(FUSOR_MOVE(arg)), spec_(spec) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  const view_spec& spec() const noexcept { return spec_; }
  int slice_count() const noexcept { return spec_.count; }

  // The node protocol (expr/node.hpp): a strided view of its operand, in memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return view_node<H, N>(FUSOR_MOVE(h), spec_);
  }
  void append_params(std::vector<std::uint64_t>& key) const { spec_.append_key(key); }

  std::string str() const { return detail::view_text(arg_.str(), spec_.str()); }

 private:
  A arg_;
  view_spec spec_;
};

/// `view(e, items...)`: e[items...] (see the file comment).
template <class X, class... S>
  requires(detail::valid_view_v<X, S...>)
[[nodiscard]] auto view(X&& x, const S&... items) {
  using A = as_expression_t<X>;
  static_assert(sizeof...(S) <= max_rank, "fusor::view: more index items than FUSOR_MAX_RANK");
  static_assert(A::rank == dynamic_rank ||
                    static_cast<int>(sizeof...(S)) - ((std::is_same_v<S, newaxis_t> ? 1 : 0) + ... + 0) <= A::rank,
                "FUSOR_TOO_MANY_INDICES: fusor::view: more index items than the expression has axes");
  view_spec spec;
  ((spec.items[static_cast<std::size_t>(spec.count++)] = detail::to_item(items)), ...);
  return view_node<A, detail::view_rank<A::rank, S...>()>(FUSOR_AS_EXPRESSION(x), spec);
}

/// np.flip(e, axis): e reversed along `axis` (negative counts from the end),
/// a view: no copy.
template <class X>
  requires(detail::view_arguments_v<X>)
[[nodiscard]] auto flip(X&& x, int axis) {
  using A = as_expression_t<X>;
  static_assert(A::rank != dynamic_rank, "fusor::flip: the operand needs a static rank");
  static_assert(A::rank > 0, "fusor::flip: a rank-0 operand has no axis to flip");
  const int a = axis < 0 ? axis + A::rank : axis;
  if (a < 0 || a >= A::rank)
    throw index_error("fusor::flip: axis " + std::to_string(axis) + " is out of bounds for an operand of rank " +
                      std::to_string(A::rank));
  view_spec spec;
  for (int d = 0; d < a; ++d) spec.items[static_cast<std::size_t>(spec.count++)] = detail::to_item(all);
  spec.items[static_cast<std::size_t>(spec.count++)] = range(_, _, -1);
  return view_node<A, A::rank>(FUSOR_AS_EXPRESSION(x), spec);
}
/// np.flip(e): e reversed along every axis.
template <class X>
  requires(detail::view_arguments_v<X>)
[[nodiscard]] auto flip(X&& x) {
  using A = as_expression_t<X>;
  static_assert(A::rank != dynamic_rank, "fusor::flip: the operand needs a static rank");
  view_spec spec;
  for (int d = 0; d < A::rank; ++d) spec.items[static_cast<std::size_t>(spec.count++)] = range(_, _, -1);
  return view_node<A, A::rank>(FUSOR_AS_EXPRESSION(x), spec);
}

}  // namespace fusor
