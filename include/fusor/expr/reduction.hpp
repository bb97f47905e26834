// fusor/expr/reduction.hpp — reductions (sum, mean, prod, max, min, argmax,
// argmin, and the NaN-ignoring nansum, nanmean, nanmax, nanmin) over one
// axis, several axes or all, with keepdims. A reduction is fused with the
// elementwise expression it reduces (no temporary for the operand); when its
// result feeds an elementwise consumer it is materialised first, so
// `Y / sum(Y)` is computed right even into Y.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/expr/functors.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/expr/text.hpp"

namespace fusor {

/// Tag: keep reduced axes as length-1 axes (NumPy's keepdims=True).
struct keepdims_t {
  explicit constexpr keepdims_t() = default;
};
inline constexpr keepdims_t keepdims{};

namespace red {
// Accumulation rules. `identity` starts the accumulator; `element` is applied
// to each operand element as it enters (nansum drops NaN there); `combine`
// merges an element or another accumulator into an accumulator. All three work
// on scalars and, through the backend, on SIMD batches.
struct rule {
  FUSOR_SCALAR_HD(T) static T element(const T& x) { return x; }
  FUSOR_BATCH_HOST(T) static T element(const T& x) { return x; }
  /// Whether a zero-size reduction is an error (no identity, as in NumPy).
  static constexpr bool needs_elements = false;
};
struct sum : rule {
  static constexpr const char* name = "sum";
  template <class T>
  static constexpr T identity() noexcept { return T(0); }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::plus{}(a, b); }  // integers wrap
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::plus{}(a, b); }  // integers wrap
};
struct prod : rule {
  static constexpr const char* name = "prod";
  template <class T>
  static constexpr T identity() noexcept { return T(1); }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::multiplies{}(a, b); }
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::multiplies{}(a, b); }
};
struct max : rule {
  static constexpr const char* name = "max";
  static constexpr bool needs_elements = true;
  template <class T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::maximum{}(a, b); }  // NaN propagates
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::maximum{}(a, b); }  // NaN propagates
};
struct min : rule {
  static constexpr const char* name = "min";
  static constexpr bool needs_elements = true;
  template <class T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::minimum{}(a, b); }
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::minimum{}(a, b); }
};
/// sum, then divided by the number of reduced elements.
struct mean : sum {
  static constexpr const char* name = "mean";
};
/// max / min ignoring NaN (NumPy's nanmax / nanmin). The identity of a float
/// is NaN, which fmax drops as soon as a number arrives: a slice of NaN only
/// stays NaN, as NumPy returns it.
struct nanmax : max {
  static constexpr const char* name = "nanmax";
  template <class T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) return std::numeric_limits<T>::quiet_NaN();
    else return max::identity<T>();
  }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::fmax{}(a, b); }
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::fmax{}(a, b); }
};
struct nanmin : min {
  static constexpr const char* name = "nanmin";
  template <class T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) return std::numeric_limits<T>::quiet_NaN();
    else return min::identity<T>();
  }
  FUSOR_SCALAR_HD(T) static T combine(const T& a, const T& b) { return fn::fmin{}(a, b); }
  FUSOR_BATCH_HOST(T) static T combine(const T& a, const T& b) { return fn::fmin{}(a, b); }
};
/// sum with NaN counted as zero (NumPy's nansum).
struct nansum : sum {
  static constexpr const char* name = "nansum";
  FUSOR_SCALAR_HD(T) static T element(const T& x) {
    using fn::isnan, fn::select;
    return select(isnan(x), T(0), x);
  }
  FUSOR_BATCH_HOST(T) static T element(const T& x) {
    using fn::isnan, fn::select;  // unqualified: batches find xsimd's by argument-dependent lookup
    return select(isnan(x), T(0), x);
  }
};
/// nansum divided by the number of elements that are not NaN (NumPy's
/// nanmean; a slice of NaN gives NaN).
struct nanmean : nansum {
  static constexpr const char* name = "nanmean";
};
/// How many elements are not NaN: what nanmean divides by.
struct count_numbers : sum {
  static constexpr const char* name = "count";
  FUSOR_SCALAR_HD(T) static T element(const T& x) {
    using fn::isnan, fn::select;
    return select(isnan(x), T(0), T(1));
  }
  FUSOR_BATCH_HOST(T) static T element(const T& x) {
    using fn::isnan, fn::select;
    return select(isnan(x), T(0), T(1));
  }
};
/// Index of the first maximum / minimum along the axis (flat index for all).
struct argmax {
  static constexpr const char* name = "argmax";
  template <class T>
  static constexpr bool better(T candidate, T best) noexcept { return candidate > best || (candidate != candidate && best == best); }
};
struct argmin {
  static constexpr const char* name = "argmin";
  template <class T>
  static constexpr bool better(T candidate, T best) noexcept { return candidate < best || (candidate != candidate && best == best); }
};
}  // namespace red

namespace detail {
/// NumPy's result dtype of a reduction: sum and prod widen small integers and
/// bool to 64 bits; mean is floating; max/min keep the dtype; arg* give int64.
template <class Op, element T>
struct reduction_result {
  using type = T;
};
template <element T>
  requires(std::is_integral_v<T>)
struct reduction_result<red::sum, T> {
  using type = std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, std::uint64_t, std::int64_t>;
};
template <element T>
  requires(std::is_integral_v<T>)
struct reduction_result<red::prod, T> : reduction_result<red::sum, T> {};
template <element T>
  requires(std::is_integral_v<T>)
struct reduction_result<red::nansum, T> : reduction_result<red::sum, T> {};
template <element T>
struct reduction_result<red::mean, T> {
  using type = std::conditional_t<std::is_floating_point_v<T>, T, double>;
};
template <element T>
struct reduction_result<red::nanmean, T> : reduction_result<red::mean, T> {};
template <element T>
struct reduction_result<red::argmax, T> {
  using type = std::int64_t;
};
template <element T>
struct reduction_result<red::argmin, T> {
  using type = std::int64_t;
};
}  // namespace detail

/// A reduction of A with operation Op; Rank is the static rank of the result.
template <class Op, class A, int Rank>
class reduce_node : public expression_base {
 public:
  using value_type = typename detail::reduction_result<Op, value_type_t<A>>::type;
  using operation = Op;
  static constexpr int rank = Rank;

  /// `axes` lists the reduced axes (negative counts from the end); empty: all.
  FUSOR_PLUMBING reduce_node(A arg, std::array<int, max_rank> axes, int naxes, bool keep)
      : arg_(FUSOR_MOVE(arg)), axes_(axes), naxes_(naxes), keepdims_(keep) {}

  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  bool all_axes() const noexcept { return naxes_ == 0; }
  FUSOR_PLUMBING int axis_count() const noexcept { return naxes_; }
  int axis(int i) const noexcept { return axes_[static_cast<std::size_t>(i)]; }
  /// The axes as given (axis_count() of them): to build another reduction over the same axes.
  const std::array<int, max_rank>& axes() const noexcept { return axes_; }
  FUSOR_PLUMBING bool keeps_dims() const noexcept { return keepdims_; }

  // The node protocol (expr/node.hpp): its operand, fused into the reduction.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return reduce_node<Op, H, Rank>(FUSOR_MOVE(h), axes_, naxes_, keepdims_);
  }
  void append_params(std::vector<std::uint64_t>& key) const {
    key.push_back(static_cast<std::uint64_t>(naxes_) | (keepdims_ ? 1ull << 32 : 0));
    for (int i = 0; i < naxes_; ++i) key.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(axis(i))));
  }

  std::string str() const { return detail::reduce_text(Op::name, arg_.str(), naxes_, axes_.data(), keepdims_); }

 private:
  A arg_;
  std::array<int, max_rank> axes_;
  int naxes_;
  bool keepdims_;
};

// Spellings shared by every reduction, argmax and argmin included:
//   sum(x)                   all axes, rank 0
//   sum(x, axis)             one run-time axis (negative counts from the end)
//   sum<Axis>(x)             one compile-time axis, checked against a static rank
#define FUSOR_REDUCTION_COMMON(NAME, OP)                                                                    \
  template <class X>                                                                                        \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x) {                                                                          \
    using A = as_expression_t<X>;                                                                           \
    return reduce_node<OP, A, (A::rank == dynamic_rank ? dynamic_rank : 0)>(FUSOR_AS_EXPRESSION(x), \
                                                                          {}, 0, false);                    \
  }                                                                                                         \
  template <class X>                                                                                        \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x, int axis) {                                                                \
    using A = as_expression_t<X>;                                                                           \
    static_assert(A::rank != 0, "fusor::" #NAME ": a rank-0 expression has no axis to reduce");             \
    return reduce_node<OP, A, (A::rank == dynamic_rank ? dynamic_rank : A::rank - 1)>(                      \
        FUSOR_AS_EXPRESSION(x), {axis}, 1, false);                                               \
  }                                                                                                         \
  template <int Axis, class X>                                                                              \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x) {                                                                          \
    using A = as_expression_t<X>;                                                                           \
    static_assert(A::rank == dynamic_rank || (Axis >= -A::rank && Axis < A::rank),                          \
                  "FUSOR_REDUCTION_AXIS_OUT_OF_RANGE: fusor::" #NAME "<Axis>: Axis must be in [-rank, rank) " \
                  "of the reduced expression");                                                             \
    return NAME(FUSOR_FORWARD(x), Axis);                                                                  \
  }

// Value reductions add:
//   sum(x, keepdims)         all axes, every axis kept with length 1
//   sum(x, axis, keepdims)   one axis, kept
//   sum(x, {0, 2})           several axes
#define FUSOR_REDUCTION(NAME, OP)                                                                           \
  FUSOR_REDUCTION_COMMON(NAME, OP)                                                                          \
  template <class X>                                                                                        \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x, keepdims_t) {                                                              \
    using A = as_expression_t<X>;                                                                           \
    return reduce_node<OP, A, A::rank>(FUSOR_AS_EXPRESSION(x), {}, 0, true);                     \
  }                                                                                                         \
  template <class X>                                                                                        \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x, int axis, keepdims_t) {                                                    \
    using A = as_expression_t<X>;                                                                           \
    return reduce_node<OP, A, A::rank>(FUSOR_AS_EXPRESSION(x), {axis}, 1, true);                 \
  }                                                                                                         \
  template <class X, std::size_t K>                                                                         \
    requires(operand<X> && !element<std::remove_cvref_t<X>>)                                                \
  [[nodiscard]] auto NAME(X&& x, const int (&axes)[K]) {                                                    \
    using A = as_expression_t<X>;                                                                           \
    static_assert(A::rank == dynamic_rank || static_cast<int>(K) <= A::rank,                                \
                  "fusor::" #NAME ": more axes than the expression has");                                   \
    std::array<int, max_rank> a{};                                                                          \
    for (std::size_t i = 0; i < K; ++i) a[i] = axes[i];                                                     \
    return reduce_node<OP, A, (A::rank == dynamic_rank ? dynamic_rank : A::rank - static_cast<int>(K))>(   \
        FUSOR_AS_EXPRESSION(x), a, static_cast<int>(K), false);                                  \
  }

FUSOR_REDUCTION(sum, red::sum)
FUSOR_REDUCTION(mean, red::mean)
FUSOR_REDUCTION(prod, red::prod)
FUSOR_REDUCTION(max, red::max)
FUSOR_REDUCTION(min, red::min)
FUSOR_REDUCTION(nansum, red::nansum)
FUSOR_REDUCTION(nanmean, red::nanmean)
FUSOR_REDUCTION(nanmax, red::nanmax)
FUSOR_REDUCTION(nanmin, red::nanmin)
/// argmax / argmin: over all elements (flat index, rank 0) or one axis.
FUSOR_REDUCTION_COMMON(argmax, red::argmax)
FUSOR_REDUCTION_COMMON(argmin, red::argmin)
#undef FUSOR_REDUCTION
#undef FUSOR_REDUCTION_COMMON

}  // namespace fusor
