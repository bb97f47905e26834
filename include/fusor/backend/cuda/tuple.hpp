// fusor/backend/cuda/tuple.hpp — a tuple for device evaluators: an aggregate,
// trivially copyable whenever its elements are (libstdc++'s std::tuple is not:
// it has a user-provided assignment), with FUSOR_HD access. A kernel
// parameter is copied bytewise, so everything a kernel receives must be
// trivially copyable; the same type must also be identical in g++ and nvcc
// units, so it is fusor's own rather than cuda::std::tuple. Portable.
#pragma once

#include <cstddef>
#include <utility>

#include "fusor/core/config.hpp"

namespace fusor::gpu {

template <std::size_t I, class T>
struct tuple_element_holder {
  T value;
};

template <class Seq, class... T>
struct tuple_base;
template <std::size_t... I, class... T>
struct tuple_base<std::index_sequence<I...>, T...> : tuple_element_holder<I, T>... {};

template <class... T>
struct tuple : tuple_base<std::index_sequence_for<T...>, T...> {};

template <std::size_t I, class T>
FUSOR_INLINE constexpr T& get(tuple_element_holder<I, T>& h) noexcept {
  return h.value;
}
template <std::size_t I, class T>
FUSOR_INLINE constexpr const T& get(const tuple_element_holder<I, T>& h) noexcept {
  return h.value;
}

}  // namespace fusor::gpu
