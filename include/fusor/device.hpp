// fusor/device.hpp — asking for a device in a unit.
//
// A unit compiles device kernels only where it asks for them: a program that
// never runs on a device pays nothing for them. Name the type of each
// function (or expression, for eval and assign) that runs on a device, once
// in some unit of the program:
//
//   #include <fusor/device.hpp>
//   FUSOR_DEVICE_INSTANTIATE(decltype(make_train(std::declval<model&>())))  // at namespace scope
//
//   auto f = fusor::function(...);                  // or, before f is built:
//   fusor::instantiate_device<decltype(f)>();       //   (decltype of the call that builds it)
//
// In a unit g++ compiles this compiles the kernels' device evaluators and
// the emulated device's loops (enough for fusor::emulated_devices); in a .cu
// file nvcc compiles, the CUDA kernels too (FUSOR_CUDA_INSTANTIATE is the
// same). A function built for a device whose kernels no unit compiled is
// refused when it is built (fusor::kernel_not_instantiated_error, naming its
// expressions).
#pragma once

#include "fusor/fusor.hpp"

#if defined(__CUDACC__)
#include "fusor/gpu/cuda/instantiate.cuh"
#else
#include "fusor/backend/gpu/instantiate.hpp"
#endif

namespace fusor {

// Two names, one per compiler, so that a program may link units of both
// (each compiles what it can).
#if defined(__CUDACC__)
inline namespace cuda_unit {
/// Compiles and registers the device kernels of T (a fusor::function type or
/// an expression type), CUDA launchers included.
template <class T>
bool instantiate_device() {
  return gpu::cuda::instantiate<T>();
}
}  // namespace cuda_unit
#else
inline namespace host_unit {
/// Compiles and registers the device kernels of T (a fusor::function type or
/// an expression type): their evaluators and the emulated device's loops.
template <class T>
bool instantiate_device() {
  return gpu::instantiate<T>();
}
}  // namespace host_unit
#endif

}  // namespace fusor

#define FUSOR_DEVICE_CONCAT_(a, b) a##b
#define FUSOR_DEVICE_CONCAT(a, b) FUSOR_DEVICE_CONCAT_(a, b)
/// Compiles and registers the device kernels of a function's or an
/// expression's type (see the file comment). At namespace scope.
#define FUSOR_DEVICE_INSTANTIATE(...)                                                                   \
  [[maybe_unused]] static const bool FUSOR_DEVICE_CONCAT(fusor_device_instantiated_, __COUNTER__) = \
      ::fusor::instantiate_device<__VA_ARGS__>();
