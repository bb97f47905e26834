// fusor/backend/gpu/tuple.hpp — the device evaluators' tuple: the nodes'
// operand_tuple (core/operand_tuple.hpp), trivially copyable whenever its
// elements are (libstdc++'s std::tuple is not: it has a user-provided
// assignment). A kernel parameter is copied bytewise, so everything a kernel
// receives must be trivially copyable; the same type must also be identical
// in g++ and nvcc units, so it is fusor's own rather than cuda::std::tuple.
// Portable.
#pragma once

#include "fusor/core/operand_tuple.hpp"

namespace fusor::gpu {

template <class... T>
using tuple = detail::operand_tuple<T...>;
using detail::get;

}  // namespace fusor::gpu
