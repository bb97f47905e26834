// fusor/expr/generate.hpp — lazy constructors: arrays that are never stored.
//
//   auto z = fusor::zeros<float>({3, 4});          // np.zeros((3, 4), np.float32)
//   auto r = fusor::arange<double>(0.0, 1.0, 0.1); // np.arange(0, 1, 0.1)
//   auto e = fusor::eye<double>(3);                // np.eye(3)
//   auto h = fusor::one_hot<float>(labels, 10);    // labels[..., None] == arange(10)
//
// Each is an elementwise function of one leaf, `iota(shape)`: the element's
// flat (row-major) index in the constructor's own shape. That leaf reads no
// memory — a kernel computes the index from the loop position, broadcasting
// like any operand — so a constructor fuses into the kernel that reads it,
// on the host and on a device, and costs no buffer and no pass.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/dims.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/view.hpp"

namespace fusor {

/// The flat row-major index of every element of `shape` (int64): the leaf of
/// the lazy constructors. Prints as its shape.
template <int N>
class iota_node : public expression_base {
 public:
  using value_type = std::int64_t;
  static constexpr int rank = N;

  explicit iota_node(const dims& shape) : shape_(shape) {
    if (N != dynamic_rank && shape.rank() != static_cast<std::size_t>(N))
      throw rank_error("fusor: a constructor of rank " + std::to_string(N) + " was given the shape " + shape.str());
  }
  const dims& shape() const noexcept { return shape_; }
  std::string str() const { return shape_.str(); }
  /// Its parameter, for a key (expr/node.hpp): the shape.
  void append_params(std::vector<std::uint64_t>& key) const {
    key.push_back(shape_.rank());
    for (std::size_t d : shape_) key.push_back(d);
  }

 private:
  dims shape_;
};

namespace fn {
/// full(index, v) = v.
struct fill {
  static constexpr const char* symbol = "full";
  template <class I, class A>
  FUSOR_INLINE A operator()(const I&, const A& v) const {
    return v;
  }
};
/// full_like(x, v) = v (x gives the shape and dtype).
struct fill_like {
  static constexpr const char* symbol = "full_like";
  template <class A>
  FUSOR_INLINE A operator()(const A&, const A& v) const {
    return v;
  }
};
/// arange(index, start, delta) = start + index * delta, in the result's dtype
/// (integers wrapping), NumPy's fill rule: NumPy writes start and start + step
/// as the first two elements, then fills element i with start + i * delta,
/// delta being their difference (which may differ from step in the last bits).
/// The product is rounded before the sum, as NumPy's loop does: on a device
/// explicitly (nvcc would fuse the two into one fma by default); on the host,
/// ISO C++ modes (-std=c++20) fuse nothing.
struct arange_at {
  static constexpr const char* symbol = "arange";
  template <class I, class A>
  FUSOR_INLINE A operator()(const I& i, const A& start, const A& delta) const {
    if constexpr (wrapping::wraps<A>) {
      return wrapping::add(start, wrapping::mul(static_cast<A>(i), delta));
    } else if constexpr (std::is_floating_point_v<A>) {
#if defined(__CUDA_ARCH__)
      if constexpr (std::is_same_v<A, float>) return __fadd_rn(start, __fmul_rn(static_cast<A>(i), delta));
      else return __dadd_rn(start, __dmul_rn(static_cast<A>(i), delta));
#else
      return start + static_cast<A>(i) * delta;
#endif
    } else {
      return static_cast<A>(start + static_cast<A>(i) * delta);
    }
  }
};
/// linspace(index, start, stop, count): evenly spaced, the last exactly stop.
struct linspace_at {
  static constexpr const char* symbol = "linspace";
  template <class I>
  FUSOR_INLINE double operator()(const I& i, double start, double stop, double count) const {
    if (count <= 1) return start;  // NumPy: linspace(a, b, 1) is [a]
    if (static_cast<double>(i) == count - 1) return stop;
    return start + static_cast<double>(i) * ((stop - start) / (count - 1));
  }
};
/// eye(index, columns, k): 1 on the k-th diagonal of a matrix of `columns` columns.
struct eye_at {
  static constexpr const char* symbol = "eye";
  template <class I>
  FUSOR_INLINE bool operator()(const I& i, const I& columns, const I& k) const {
    return i % columns - i / columns == k;
  }
};
}  // namespace fn

namespace detail {
template <std::size_t N>
dims shape_of_list(const std::size_t (&extents)[N]) {
  dims d;
  for (std::size_t e : extents) d.push_back(e);
  return d;
}
}  // namespace detail

/// np.full(shape, value, dtype=T).
template <element T, std::size_t N>
[[nodiscard]] auto full(const std::size_t (&shape)[N], T value) {
  return detail::map_t<fn::fill, T, type_list<std::int64_t, T>, iota_node<static_cast<int>(N)>, constant<T>>(
      iota_node<static_cast<int>(N)>(detail::shape_of_list(shape)), constant<T>(value));
}
/// np.full with a shape known only at run time (an expression of dynamic rank).
template <element T>
[[nodiscard]] auto full(const dims& shape, T value) {
  return detail::map_t<fn::fill, T, type_list<std::int64_t, T>, iota_node<dynamic_rank>, constant<T>>(
      iota_node<dynamic_rank>(shape), constant<T>(value));
}
/// np.zeros(shape, dtype=T).
template <element T = double, std::size_t N>
[[nodiscard]] auto zeros(const std::size_t (&shape)[N]) {
  return full<T>(shape, T(0));
}
template <element T = double>
[[nodiscard]] auto zeros(const dims& shape) {
  return full<T>(shape, T(0));
}
/// np.ones(shape, dtype=T).
template <element T = double, std::size_t N>
[[nodiscard]] auto ones(const std::size_t (&shape)[N]) {
  return full<T>(shape, T(1));
}
template <element T = double>
[[nodiscard]] auto ones(const dims& shape) {
  return full<T>(shape, T(1));
}

/// np.full_like(x, value): x's shape and dtype, every element `value` (a C++
/// number, converted to x's dtype). Reads x's shape only; a compound x is
/// still computed (write zeros(shape) when the shape is known).
template <class X, element V>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto full_like(X&& x, V value) {
  using T = value_type_t<as_expression_t<X>>;
  return detail::map_of<fn::fill_like, T, type_list<T, T>, X, constant<T>>(
      FUSOR_AS_EXPRESSION(x), constant<T>(static_cast<T>(value)));
}
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto zeros_like(X&& x) {
  return full_like(FUSOR_FORWARD(x), 0);
}
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto ones_like(X&& x) {
  return full_like(FUSOR_FORWARD(x), 1);
}

/// np.arange(start, stop, step, dtype=T): ceil((stop - start) / step)
/// elements start + i * ((start + step) - start), as NumPy fills them. A zero
/// step is a fusor::value_error.
template <element T>
[[nodiscard]] auto arange(T start, T stop, T step = T(1)) {
  if (step == T(0)) throw value_error("fusor::arange: the step is zero");
  const double n = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step));
  const std::size_t count = n > 0 ? static_cast<std::size_t>(n) : 0;
  // NumPy's second element, start + step (in double, as NumPy adds Python
  // numbers, then stored in T), and the difference its fill loop steps by.
  T second, delta;
  if constexpr (wrapping::wraps<T>) {
    second = wrapping::add(start, step);
    delta = wrapping::sub(second, start);
  } else {
    second = static_cast<T>(static_cast<double>(start) + static_cast<double>(step));
    delta = static_cast<T>(second - start);
  }
  return detail::map_t<fn::arange_at, T, type_list<std::int64_t, T, T>, iota_node<1>, constant<T>, constant<T>>(
      iota_node<1>(dims{count}), constant<T>(start), constant<T>(delta));
}
/// np.arange(stop, dtype=T): 0, 1, ..., stop - 1.
template <element T>
[[nodiscard]] auto arange(T stop) {
  return arange<T>(T(0), stop, T(1));
}

/// np.linspace(start, stop, num, dtype=T): num evenly spaced values from
/// start to stop, both included (computed in double, then converted).
template <element T = double>
[[nodiscard]] auto linspace(double start, double stop, std::size_t num) {
  auto values = detail::map_t<fn::linspace_at, double, type_list<std::int64_t, double, double, double>, iota_node<1>,
                              constant<double>, constant<double>, constant<double>>(
      iota_node<1>(dims{num}), constant<double>(start), constant<double>(stop), constant<double>(static_cast<double>(num)));
  if constexpr (std::is_same_v<T, double>) return values;
  else return cast<T>(FUSOR_MOVE(values));
}

/// np.eye(rows, columns, k, dtype=T): ones on the k-th diagonal (k > 0 above
/// the main one), zeros elsewhere.
template <element T = double>
[[nodiscard]] auto eye(std::size_t rows, std::size_t columns, std::int64_t k = 0) {
  const auto cols = static_cast<std::int64_t>(columns == 0 ? 1 : columns);  // an empty matrix never evaluates it
  return cast<T>(detail::map_t<fn::eye_at, bool, type_list<std::int64_t, std::int64_t, std::int64_t>, iota_node<2>,
                               constant<std::int64_t>, constant<std::int64_t>>(
      iota_node<2>(dims{rows, columns}), constant<std::int64_t>(cols), constant<std::int64_t>(k)));
}
template <element T = double>
[[nodiscard]] auto eye(std::size_t n) {
  return eye<T>(n, n, 0);
}

namespace detail {
template <class X, std::size_t... K>
auto with_new_last_axis(X&& x, std::index_sequence<K...>) {
  return view(FUSOR_FORWARD(x), ((void)K, all)..., newaxis);
}
}  // namespace detail

/// one_hot(labels, n): for integer labels of shape S, an array of shape
/// S + (n,) with 1 at each label's position (`labels[..., None] == arange(n)`,
/// as T). A label outside [0, n) gives a row of zeros, as the comparison does.
template <element T = double, class L>
  requires(operand<L> && !element<std::remove_cvref_t<L>>)
[[nodiscard]] auto one_hot(L&& labels, std::size_t n) {
  using E = as_expression_t<L>;
  static_assert(std::is_integral_v<value_type_t<E>> && !std::is_same_v<value_type_t<E>, bool>,
                "fusor::one_hot: the labels must be integers");
  static_assert(E::rank != dynamic_rank, "fusor::one_hot: the labels need a static rank");
  auto column = detail::with_new_last_axis(FUSOR_AS_EXPRESSION(labels),
                                           std::make_index_sequence<static_cast<std::size_t>(E::rank)>{});
  return cast<T>(FUSOR_MOVE(column) == arange<std::int64_t>(static_cast<std::int64_t>(n)));
}

namespace fn {
/// broadcast_to(x, index) = x (the index leaf gives the shape).
struct broadcast_first {
  static constexpr const char* symbol = "broadcast_to";
  template <class A, class I>
  FUSOR_INLINE A operator()(const A& a, const I&) const {
    return a;
  }
};
}  // namespace fn

/// np.broadcast_to(e, shape): e read at the broadcast shape, no copy (the
/// kernel broadcasts it as it does any operand). The result's shape is the
/// broadcast of e's shape and `shape`: an e that does not broadcast to it is
/// a shape_error when the expression is evaluated.
template <std::size_t N, class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto broadcast_to(X&& x, const std::size_t (&shape)[N]) {
  using E = as_expression_t<X>;
  using T = value_type_t<E>;
  static_assert(E::rank == dynamic_rank || E::rank <= static_cast<int>(N),
                "fusor::broadcast_to: the operand has more axes than the shape");
  return detail::map_t<fn::broadcast_first, T, type_list<T, std::int64_t>, E, iota_node<static_cast<int>(N)>>(
      FUSOR_AS_EXPRESSION(x), iota_node<static_cast<int>(N)>(detail::shape_of_list(shape)));
}

}  // namespace fusor
