// The device the device tests run on: an emulated one (every CI run, no GPU
// needed), or a real CUDA device when the test is built into the GPU suite
// (FUSOR_TEST_REAL_DEVICE, linked with fusor's CUDA runtime; without a device
// that binary reports itself skipped before running anything).
#pragma once

#include <cstddef>
#include <vector>

#include <doctest/doctest.h>

#include <fusor/fusor.hpp>
#include <fusor/memory/emulated_device.hpp>
#ifdef FUSOR_TEST_REAL_DEVICE
#include <fusor/cuda.hpp>
#endif
#ifdef __CUDACC__
#include <fusor/gpu/instantiate.cuh>
#endif

namespace device_test {

/// Holds the emulation for the duration of a test (nothing with a real device).
struct fixture {
#ifndef FUSOR_TEST_REAL_DEVICE
  fusor::emulated_devices emulation{fusor::emulation_options{.devices = 2}};
#endif
  fusor::device_runtime& runtime() const { return *fusor::current_device_runtime(); }
  bool emulated() const { return runtime().emulated(); }
  fusor::device_memory_stats memory(int i = 0) const { return runtime().memory(i); }
};

inline constexpr fusor::memory_space dev = fusor::cuda(0);

/// fusor::function, with its CUDA kernels compiled and registered first when
/// this unit is compiled by nvcc (as a program's .cu would with
/// FUSOR_CUDA_INSTANTIATE): the GPU suite builds the device tests with nvcc.
template <class... A>
auto function(A&&... args) {
#ifdef __CUDACC__
  fusor::gpu::cuda::instantiate<decltype(fusor::function(std::forward<A>(args)...))>();
#endif
  return fusor::function(std::forward<A>(args)...);
}

/// Likewise for an expression evaluated by eval or assign.
template <class X>
const X& kernels(const X& expr) {
#ifdef __CUDACC__
  fusor::gpu::cuda::instantiate<fusor::as_expression_t<const X&>>();
#endif
  return expr;
}

/// An array's elements as host values (the array may be on a device).
template <class E>
std::vector<E> host_values(const fusor::array<E>& a) {
  std::vector<E> out(a.size());
  if (!out.empty()) fusor::copy_bytes(out.data(), fusor::host, a.data(), a.space(), a.bytes());
  return out;
}

}  // namespace device_test
