// fusor/gpu/cuda/instantiate.cuh — compiling a program's CUDA kernels, in a .cu
// file that nvcc compiles:
//
//   // model_kernels.cu
//   #include <fusor/gpu/cuda/instantiate.cuh>
//   #include "model.hpp"                 // where make_train() is declared
//   FUSOR_CUDA_INSTANTIATE(decltype(make_train(std::declval<model&>())))
//
// The macro takes a function's type (fusor::function<...>) or an expression's
// type. It compiles every kernel that function or expression needs on a device
// — each fused group (an output, an update, a replacement, an operand read
// from memory), each reduction fused with its operand, each integer exponent
// check — and registers their launchers, keyed by the evaluator types they
// run. A function built in any unit of the program (g++ or nvcc) finds them
// when it is built for a device; one that is missing is reported then,
// naming its expression.
#pragma once

#include <type_traits>

#include "fusor/backend/gpu/instantiate.hpp"
#include "fusor/gpu/cuda/kernels.cuh"

namespace fusor::gpu::cuda {

/// Registers each kernel's device entry (backend/gpu/instantiate.hpp) and
/// compiles and registers its CUDA launcher.
struct register_launchers {
  template <class X>
  static void group() {
    register_entries::group<X>();
    using K = group_kernel_of<X>;
    register_launcher<typename K::tag>(&launch_group<value_type_t<X>, typename K::Ev>);
  }
  template <class X>
  static void reduce() {
    register_entries::reduce<X>();
    using K = reduce_kernel_of<X>;
    register_launcher<typename K::tag>(&launch_reduce<typename K::op, typename K::Acc, typename K::Ev>);
  }
  template <class X>
  static void dot() {
    register_entries::dot<X>();  // cuBLAS: no kernel of fusor's
  }
  template <class X>
  static void check() {
    register_entries::check<X>();
    // the exponent's minimum, found by a min reduction (a scalar exponent needs none)
    using Ev = evaluator_t<pow_exponent_t<X>>;
    using T = typename Ev::value_type;
    if constexpr (!std::is_same_v<Ev, scalar<T>>)
      register_launcher<reduce_tag<red::min, T, Ev>>(&launch_reduce<red::min, T, Ev>);
  }
  template <class... Xs>
  static void multi() {
    register_entries::multi<Xs...>();
    using K = gpu::multi_kernel<group_kernel_of<Xs>...>;
    register_launcher<typename K::tag>(&launch_multi<typename K::Evs, value_type_t<Xs>...>);
  }
};

/// Compiles and registers the device kernels of a function's or an
/// expression's type T, CUDA launchers included.
template <class T>
bool instantiate() {
  kernel_walk<register_launchers>::template of<std::remove_cvref_t<T>>::walk();
  return true;
}

}  // namespace fusor::gpu::cuda

#define FUSOR_CUDA_CONCAT_(a, b) a##b
#define FUSOR_CUDA_CONCAT(a, b) FUSOR_CUDA_CONCAT_(a, b)
/// Compiles and registers the CUDA kernels of a function's or an expression's
/// type (see the file comment). At namespace scope, in a unit nvcc compiles.
#define FUSOR_CUDA_INSTANTIATE(...)                                                          \
  [[maybe_unused]] static const bool FUSOR_CUDA_CONCAT(fusor_cuda_instantiated_, __COUNTER__) = \
      ::fusor::gpu::cuda::instantiate<__VA_ARGS__>();
