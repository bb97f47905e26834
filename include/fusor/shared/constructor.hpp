// fusor/shared/constructor.hpp — which C++ types a shared variable can be made
// from (PyTensor's shared_constructor registry), as a compile-time trait.
//
// A type is registered by specialising fusor::shared_constructor<T>. Two kinds:
//
// * tensor-like: the specialisation provides
//       using element_type = E;                 // a fusor::element
//       static constexpr int rank = N;          // or fusor::dynamic_rank
//       static fusor::dims shape(const T&);
//       static const E* data(const T&);         // contiguous, row-major
//       static T make(const fusor::dims&, const E* src);  // a deep copy
//   The value is stored as a fusor::array<E>; a borrowed lvalue is aliased,
//   a moved-in rvalue is adopted without copying its elements.
//
// * generic (PyTensor's generic shared variable, R14): derive the
//   specialisation from fusor::generic_constructor<T>. Any copyable object is
//   held as is and deep-copied by get_value().
//
// An unregistered type is a compile-time error that names it.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstring>
#include <type_traits>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"

namespace fusor {

namespace detail {
/// The primary template's base: its presence means "no specialisation".
struct unregistered_constructor {};
}  // namespace detail

/// Primary template: not registered. See the file comment for how to register.
template <class T>
struct shared_constructor : detail::unregistered_constructor {};

/// Base for registering a generic (non-tensor) type.
template <class T>
struct generic_constructor {
  static_assert(std::is_copy_constructible_v<T>, "fusor::generic_constructor<T>: T must be copy-constructible, "
                                                 "because get_value() returns a deep copy");
  static constexpr bool generic = true;
};

// A type trait rather than a requires-expression on the primary template's
// member: a base-class test is an ordinary (cached) instantiation, so its
// answer cannot depend on where in a translation unit it is first asked.
template <class T>
concept registered = !std::is_base_of_v<detail::unregistered_constructor, shared_constructor<T>>;

template <class T>
concept generic_shareable = registered<T> && requires { requires shared_constructor<T>::generic; };

template <class T>
concept tensor_shareable = registered<T> && requires(const T& v, const dims& d) {
  typename shared_constructor<T>::element_type;
  requires element<typename shared_constructor<T>::element_type>;
  { shared_constructor<T>::rank } -> std::convertible_to<int>;
  { shared_constructor<T>::shape(v) } -> std::same_as<dims>;
  { shared_constructor<T>::data(v) } -> std::same_as<const typename shared_constructor<T>::element_type*>;
  { shared_constructor<T>::make(d, shared_constructor<T>::data(v)) } -> std::same_as<T>;
};

/// The element type of a tensor-like registered type.
template <tensor_shareable T>
using element_type_of = typename shared_constructor<T>::element_type;

/// The static rank of a tensor-like registered type (or dynamic_rank).
template <tensor_shareable T>
inline constexpr int rank_of = shared_constructor<T>::rank;

// ---------------------------------------------------------------- built-ins

/// Arithmetic scalars: rank 0 (PyTensor's scalar_constructor).
template <element E>
struct shared_constructor<E> {
  using element_type = E;
  static constexpr int rank = 0;
  static dims shape(const E&) noexcept { return {}; }
  static const E* data(const E& v) noexcept { return &v; }
  static E make(const dims&, const E* src) noexcept { return *src; }
};

/// xt::xarray<E>: dynamic rank, fixed when the variable is created.
template <element E>
struct shared_constructor<xt::xarray<E>> {
  using element_type = E;
  static constexpr int rank = dynamic_rank;
  static dims shape(const xt::xarray<E>& v) { return dims::from(v.shape()); }
  static const E* data(const xt::xarray<E>& v) noexcept { return v.data(); }
  static xt::xarray<E> make(const dims& d, const E* src) {
    xt::xarray<E> r(typename xt::xarray<E>::shape_type(d.begin(), d.end()));
    if (r.size()) std::memcpy(r.data(), src, r.size() * sizeof(E));
    return r;
  }
};

/// xt::xtensor<E, N>: static rank N.
template <element E, std::size_t N>
struct shared_constructor<xt::xtensor<E, N>> {
  using element_type = E;
  static constexpr int rank = static_cast<int>(N);
  static dims shape(const xt::xtensor<E, N>& v) { return dims::from(v.shape()); }
  static const E* data(const xt::xtensor<E, N>& v) noexcept { return v.data(); }
  static xt::xtensor<E, N> make(const dims& d, const E* src) {
    typename xt::xtensor<E, N>::shape_type s{};
    std::copy(d.begin(), d.end(), s.begin());
    xt::xtensor<E, N> r(s);
    if (r.size()) std::memcpy(r.data(), src, r.size() * sizeof(E));
    return r;
  }
};

/// std::vector<E>: rank 1. (std::vector<bool> is not contiguous and is not
/// registered; use xt::xarray<bool>.)
template <element E>
  requires(!std::same_as<E, bool>)
struct shared_constructor<std::vector<E>> {
  using element_type = E;
  static constexpr int rank = 1;
  static dims shape(const std::vector<E>& v) { return {v.size()}; }
  static const E* data(const std::vector<E>& v) noexcept { return v.data(); }
  static std::vector<E> make(const dims& d, const E* src) { return std::vector<E>(src, src + d.elements()); }
};

}  // namespace fusor
