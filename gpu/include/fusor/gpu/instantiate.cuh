// fusor/gpu/instantiate.cuh — compiling a program's CUDA kernels, in a .cu
// file that nvcc compiles:
//
//   // model_kernels.cu
//   #include <fusor/gpu/instantiate.cuh>
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

#include "fusor/compile/function.hpp"
#include "fusor/gpu/kernels.cuh"

namespace fusor::gpu::cuda {

template <class X>
void register_group() {
  using Ev = evaluator_t<X>;
  using E = value_type_t<X>;
  register_launcher<group_tag<E, Ev>>(&launch_group<E, Ev>);
}

template <class X>
struct kernels_of;

/// The kernels of node X and of every node below it (X itself is fused into
/// whatever reads it, or, as a root, written by a group kernel).
template <class X>
void walk() {
  kernels_of<X>::walk();
}
template <class X>
void walk_root() {
  walk<X>();
  register_group<X>();
}

template <class T, int N>
struct kernels_of<input<T, N>> {
  static void walk() {}
};
template <class T>
struct kernels_of<shared_leaf<T>> {
  static void walk() {}
};
template <element E>
struct kernels_of<constant<E>> {
  static void walk() {}
};
template <int N>
struct kernels_of<iota_node<N>> {
  static void walk() {}
};
template <class F, class R, class Casts, class... A>
struct kernels_of<map_node<F, R, Casts, A...>> {
  static void walk() {
    (cuda::walk<A>(), ...);
    if constexpr (is_checked_pow_v<map_node<F, R, Casts, A...>>) {
      using Exponent = std::tuple_element_t<1, std::tuple<A...>>;
      using Ev = evaluator_t<Exponent>;
      using T = typename Ev::value_type;
      if constexpr (!std::is_same_v<Ev, scalar<T>>)
        register_launcher<reduce_tag<red::min, T, Ev>>(&launch_reduce<red::min, T, Ev>);
    }
  }
};
template <element T, class A>
struct kernels_of<cast_node<T, A>> {
  static void walk() { cuda::walk<A>(); }
};
template <class Op, class A, int Rank>
struct kernels_of<reduce_node<Op, A, Rank>> {
  static void walk() {
    cuda::walk<A>();
    using K = reduce_kernel<reduce_node<Op, A, Rank>>;
    register_launcher<typename K::tag>(&launch_reduce<Op, typename K::Acc, typename K::Ev>);
  }
};
template <class A, class B>
struct kernels_of<dot_node<A, B>> {
  template <class O>
  static void operand() {
    using V = typename dot_node<A, B>::value_type;
    if constexpr (std::is_same_v<value_type_t<O>, V>) walk_root<O>();
    else walk_root<cast_node<V, O>>();
  }
  static void walk() {
    operand<A>();
    operand<B>();
  }
};
template <class A>
struct kernels_of<transpose_node<A>> {
  static void walk() { walk_root<A>(); }
};
template <class A, int N>
struct kernels_of<reshape_node<A, N>> {
  static void walk() { walk_root<A>(); }
};
template <class A, int N>
struct kernels_of<view_node<A, N>> {
  static void walk() { walk_root<A>(); }
};
template <class A>
struct kernels_of<specify_node<A>> {
  static void walk() { walk_root<A>(); }
};
template <class A>
struct kernels_of<diagonal_node<A>> {
  static void walk() { walk_root<A>(); }
};
template <class A, class I, int N>
struct kernels_of<take_node<A, I, N>> {
  static void walk() {
    walk_root<A>();
    walk_root<I>();
  }
};
template <int N, class... A>
struct kernels_of<join_node<N, A...>> {
  static void walk() { (walk_root<A>(), ...); }
};
template <class G, class L>
struct kernels_of<sum_to_node<G, L>> {
  static void walk() {
    cuda::walk<G>();
    cuda::walk<L>();  // only its shape is read; its nodes are in the graph all the same
    using K = reduce_kernel<reduce_node<red::sum, G, L::rank>>;
    register_launcher<typename K::tag>(&launch_reduce<red::sum, typename K::Acc, typename K::Ev>);
  }
};
template <class G, class L>
struct kernels_of<reshape_like_node<G, L>> {
  static void walk() {
    walk_root<G>();
    cuda::walk<L>();
  }
};
template <element T, class N, class D>
struct kernels_of<size_ratio_node<T, N, D>> {
  static void walk() {
    cuda::walk<N>();
    cuda::walk<D>();
  }
};
template <class X>
struct kernels_of<ref_node<X>> : kernels_of<X> {};
template <element T, class L>
struct kernels_of<zeros_of_node<T, L>> {
  static void walk() { cuda::walk<L>(); }
};
template <class C>
struct kernels_of<gate_node<C>> {
  static void walk() { cuda::walk<C>(); }
};
template <class G, class F, std::size_t K>
struct kernels_of<place_node<G, F, K>> {
  static void walk() {
    walk_root<G>();  // the adjoint, read from memory
    cuda::walk<F>(); // the selection: its shapes (and a take's indices) are read; its nodes are in the graph
  }
};

/// What a function's type or an expression's type needs.
template <class T>
struct instantiation {
  static void run() { walk_root<T>(); }
};
template <class Plain>
struct multi_of {
  static void run() {}
};
template <class X0, class X1, class... Xs>
struct multi_of<std::tuple<X0, X1, Xs...>> {
  static void run() {
    using K = gpu::multi_kernel<X0, X1, Xs...>;
    register_launcher<typename K::tag>(
        &launch_multi<typename K::Evs, value_type_t<X0>, value_type_t<X1>, value_type_t<Xs>...>);
  }
};

template <class... I, class... O, class... U, class... G>
struct instantiation<function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>>> {
  static void run() {
    (walk_root<typename O::expression_type>(), ...);
    (walk_root<decltype(std::declval<U>().expression)>(), ...);
    (walk_root<decltype(std::declval<G>().replacement)>(), ...);
    // Outputs of one shape that are never written in place: one pass.
    multi_of<typename function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>>::plain_tuple>::run();
  }
};

template <class T>
bool instantiate() {
  instantiation<std::remove_cvref_t<T>>::run();
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
