// fusor/cuda.hpp — links fusor's CUDA runtime into a program.
//
//   #include <fusor/fusor.hpp>
//   #include <fusor/cuda.hpp>      // and link fusor_cuda (pkg-config fusor-cuda)
//   auto w = fusor::shared(xv, {.name = "w", .space = fusor::cuda(0)});
//
// Portable: no CUDA header here, and g++ compiles it; the runtime itself (a
// stream-ordered device pool, pinned staging for copies, cuBLAS handles, the
// kernel registry's CUDA launchers) is the compiled library libfusor_cuda.
// Including this header makes the program refer to that library, so a link
// without it fails with an undefined reference to fusor_cuda_runtime rather
// than at the first device allocation.
#pragma once

#include "fusor/memory/device.hpp"

extern "C" fusor::device_runtime* fusor_cuda_runtime();

namespace fusor::detail {
inline const bool cuda_runtime_linked = [] {
  runtimes().linked.store(&fusor_cuda_runtime, std::memory_order_release);
  return true;
}();
}  // namespace fusor::detail
