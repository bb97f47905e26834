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
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/memory/array.hpp"

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

// The registry's concepts are single traits, each one atomic constraint: a
// requires-expression on the primary template, or a conjunction with nested
// requirements, was occasionally judged unsatisfied for registered types by
// GCC 12 (one build in a few dozen); ordinary template instantiation is not.
namespace detail {
template <class T>
inline constexpr bool is_registered_v = !std::is_base_of_v<unregistered_constructor, shared_constructor<T>>;

template <class T, class = void>
inline constexpr bool is_generic_v = false;
template <class T>
inline constexpr bool is_generic_v<T, std::void_t<decltype(shared_constructor<T>::generic)>> =
    is_registered_v<T> && static_cast<bool>(shared_constructor<T>::generic);

/// The tensor interface: element_type, rank, shape(v), data(v), make(d, p)
/// (the unregistered primary template has none of it).
template <class T, class = void>
inline constexpr bool has_tensor_interface_v = false;
template <class T>
inline constexpr bool has_tensor_interface_v<
    T, std::void_t<typename shared_constructor<T>::element_type, decltype(shared_constructor<T>::rank),
                   decltype(shared_constructor<T>::shape(std::declval<const T&>())),
                   decltype(shared_constructor<T>::data(std::declval<const T&>())),
                   decltype(shared_constructor<T>::make(std::declval<const dims&>(),
                                                        shared_constructor<T>::data(std::declval<const T&>())))>> =
    is_element_v<typename shared_constructor<T>::element_type> &&
    std::is_convertible_v<decltype(shared_constructor<T>::rank), int> &&
    std::is_same_v<decltype(shared_constructor<T>::shape(std::declval<const T&>())), dims> &&
    std::is_same_v<decltype(shared_constructor<T>::data(std::declval<const T&>())),
                   const typename shared_constructor<T>::element_type*> &&
    std::is_same_v<decltype(shared_constructor<T>::make(std::declval<const dims&>(),
                                                        shared_constructor<T>::data(std::declval<const T&>()))),
                   T>;
}  // namespace detail

template <class T>
concept registered = detail::is_registered_v<T>;

template <class T>
concept generic_shareable = detail::is_generic_v<T>;

template <class T>
concept tensor_shareable = detail::has_tensor_interface_v<T>;

/// The element type of a tensor-like registered type.
template <tensor_shareable T>
using element_type_of = typename shared_constructor<T>::element_type;

/// The static rank of a tensor-like registered type (or dynamic_rank).
template <tensor_shareable T>
inline constexpr int rank_of = shared_constructor<T>::rank;

/// Where a tensor-like value's elements live: the host, unless its
/// constructor says otherwise with `static memory_space space(const T&)`
/// (fusor::array<E> does: it may hold device memory).
namespace detail {
template <class T, class = void>
inline constexpr bool declares_space_v = false;
template <class T>
inline constexpr bool declares_space_v<T, std::void_t<decltype(shared_constructor<T>::space(std::declval<const T&>()))>> =
    true;
}  // namespace detail

template <tensor_shareable T>
memory_space space_of(const T& v) {
  if constexpr (detail::declares_space_v<T>) return shared_constructor<T>::space(v);
  else return host;
}

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
    // Rank 0 has no extents to copy (and std::copy into a zero-length array's
    // null begin() draws a -Wnonnull warning from g++).
    if constexpr (N > 0) std::copy(d.begin(), d.end(), s.begin());
    xt::xtensor<E, N> r(s);
    if (r.size()) std::memcpy(r.data(), src, r.size() * sizeof(E));
    return r;
  }
};

namespace detail {
/// Why an array without the bytes its shape needs is refused.
template <element E>
std::string unbacked_array_message(const array<E>& a) {
  return "a fusor::array<" + std::string(cpp_name(dtype_of<E>)) + "> of shape " + a.shape().str() +
         " that needs " + std::to_string(a.bytes()) + " bytes of elements but holds a buffer of " +
         std::to_string(a.storage().bytes()) +
         " bytes (a default-constructed fusor::array holds no buffer); use an array from "
         "get_value(fusor::borrow, fusor::internal_type), Out(y, fusor::internal_type), "
         "fusor::array<E>::allocate or fusor::array<E>::copy_of";
}
}  // namespace detail

/// fusor::array<E>, the internal storage type, as a value of its own: on the
/// host or on a device (the seeds' in-place pattern with internal objects:
/// `s.set_value(s.get_value(borrow, internal_type), borrow)`). A variable
/// made from one lives in its space, and get_value() returns one.
template <element E>
struct shared_constructor<array<E>> {
  using element_type = E;
  static constexpr int rank = dynamic_rank;
  /// The array's shape, once it is known to have the bytes the shape needs: a
  /// default-constructed array has shape () (one element) and no buffer, and
  /// reading it would read nothing at all. Every path that takes an array as
  /// a value (shared variables, function arguments, eval bindings) asks for
  /// its shape first, so none of them reads such an array.
  static dims shape(const array<E>& a) {
    if (a.storage().bytes() < a.bytes()) throw value_error("fusor: cannot read " + detail::unbacked_array_message(a));
    return a.shape();
  }
  /// In the array's space: see space().
  static const E* data(const array<E>& a) noexcept { return a.data(); }
  static array<E> make(const dims& d, const E* src) { return array<E>::copy_of(d, src); }
  static memory_space space(const array<E>& a) noexcept { return a.space(); }
};

template <class T>
inline constexpr bool is_array_v = false;
template <element E>
inline constexpr bool is_array_v<array<E>> = true;

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
