// fusor/backend/cuda/instantiate.hpp — compiling and registering the device
// kernels of a function's or an expression's type, in a unit that asks for a
// device (registry.hpp says why only there).
//
// The walk below visits the node types of a type as the graph builder
// (compile/graph.hpp) does and names, for each, the kernels the builder asks
// a backend for: a group kernel for every root and every operand read from
// memory, a reduction kernel for every reduction, a dot kernel, an exponent
// check. A policy decides what naming one does: here, registering the device
// kernel entry (its emulated loop); in a unit nvcc compiles
// (fusor/gpu/instantiate.cuh), also compiling and registering its CUDA
// launcher. The walk may name more kernels than a graph uses (a closed
// gate's operand, a selection's operand read only for its shape); never fewer.
//
// Portable: g++ compiles it.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/backend/cuda/registry.hpp"
#include "fusor/function.hpp"
#include "fusor/rewrite/stable.hpp"

namespace fusor::gpu {

template <class Policy>
struct kernel_walk {
  template <class X>
  struct children;

  /// Node X and every node below it (X itself is fused into whatever reads it).
  template <class X>
  static void node() {
    if constexpr (is_ref_v<X>) {
      node<typename X::target_type>();
    } else {
      children<X>::walk();
      if constexpr (fusor::detail::has<fusor::detail::member::operation, X>) Policy::template reduce<X>();
      if constexpr (is_dot_v<X>) Policy::template dot<X>();
      if constexpr (is_checked_pow_v<X>) Policy::template check<X>();
    }
  }
  /// Node X, computed into memory (a root, or an operand read from memory).
  template <class X>
  static void root() {
    if constexpr (is_ref_v<X>) {
      root<typename X::target_type>();
    } else {
      node<X>();
      Policy::template group<X>();
    }
  }

  template <class X>
  struct children {
    static void walk() {}  // leaves: inputs, shared variables, constants, iota
  };
  template <class F, class R, class Casts, class... A>
  struct children<map_node<F, R, Casts, A...>> {
    static void walk() { (node<A>(), ...); }
  };
  template <element T, class A>
  struct children<cast_node<T, A>> {
    static void walk() { node<A>(); }
  };
  template <class Op, class A, int Rank>
  struct children<reduce_node<Op, A, Rank>> {
    static void walk() { node<A>(); }
  };
  template <class A, class B>
  struct children<dot_node<A, B>> {
    template <class O>
    static void operand() {
      using V = typename dot_node<A, B>::value_type;
      if constexpr (std::is_same_v<value_type_t<O>, V>) root<O>();
      else root<cast_node<V, O>>();
    }
    static void walk() {
      operand<A>();
      operand<B>();
    }
  };
  template <class A>
  struct children<transpose_node<A>> {
    static void walk() { root<A>(); }
  };
  template <class A, int N>
  struct children<reshape_node<A, N>> {
    static void walk() { root<A>(); }
  };
  template <class A, int N>
  struct children<view_node<A, N>> {
    static void walk() { root<A>(); }
  };
  template <class A>
  struct children<specify_node<A>> {
    static void walk() { root<A>(); }
  };
  template <class A>
  struct children<diagonal_node<A>> {
    static void walk() { root<A>(); }
  };
  template <class A, class I, int N>
  struct children<take_node<A, I, N>> {
    static void walk() {
      root<A>();
      root<I>();
    }
  };
  template <int N, class... A>
  struct children<join_node<N, A...>> {
    static void walk() { (root<A>(), ...); }
  };
  template <class G, class L>
  struct children<sum_to_node<G, L>> {
    static void walk() {
      node<G>();
      node<L>();  // only its shape is read; its nodes are in the graph all the same
    }
  };
  template <class G, class L>
  struct children<reshape_like_node<G, L>> {
    static void walk() {
      root<G>();
      node<L>();
    }
  };
  template <element T, class N, class D>
  struct children<size_ratio_node<T, N, D>> {
    static void walk() {
      node<N>();
      node<D>();
    }
  };
  template <element T, class L>
  struct children<zeros_of_node<T, L>> {
    static void walk() { node<L>(); }
  };
  template <class C>
  struct children<gate_node<C>> {
    static void walk() { node<C>(); }
  };
  template <class G, class F, std::size_t K>
  struct children<place_node<G, F, K>> {
    static void walk() {
      root<G>();                                            // the adjoint, read from memory
      node<std::remove_cvref_t<decltype(std::declval<const place_node<G, F, K>&>().forward())>>();  // shapes, indices
    }
  };

  /// Several outputs of one shape computed in one pass.
  template <class Plain>
  struct multi {
    static void walk() {}
  };
  template <class X0, class X1, class... Xs>
  struct multi<std::tuple<X0, X1, Xs...>> {
    static void walk() { Policy::template multi<X0, X1, Xs...>(); }
  };

  /// What a function's type or an expression's type needs.
  template <class T>
  struct of {
    // an expression, as eval and assign build it: stable rewrites applied
    static void walk() { root<std::remove_cvref_t<decltype(stabilize(std::declval<const as_expression_t<const T&>&>()))>>(); }
  };
  template <class... I, class... O, class... U, class... G>
  struct of<function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>>> {
    static void walk() {
      (root<typename O::expression_type>(), ...);
      (root<std::remove_cvref_t<decltype(std::declval<U>().expression)>>(), ...);
      (root<std::remove_cvref_t<decltype(std::declval<G>().replacement)>>(), ...);
      multi<typename function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>>::plain_tuple>::walk();
    }
  };
};

/// Registers each kernel's device entry: what the emulated device runs, and
/// what looks up a CUDA launcher on a real device.
struct register_entries {
  template <class X>
  static void group() {
    kernel_registry::instance().add(static_cast<std::size_t>(kernel_role::group), kernel_key<X>(),
                                    &group_kernel_of<X>::entry);
  }
  template <class X>
  static void reduce() {
    kernel_registry::instance().add(static_cast<std::size_t>(kernel_role::reduce), kernel_key<X>(),
                                    &reduce_kernel_of<X>::entry);
  }
  template <class X>
  static void dot() {
    kernel_registry::instance().add(static_cast<std::size_t>(kernel_role::dot), kernel_key<X>(), &dot_kernel<value_type_t<X>>::entry);
  }
  template <class X>
  static void check() {
    kernel_registry::instance().add(static_cast<std::size_t>(kernel_role::check), kernel_key<X>(),
                                    &check_kernel_of<X>::entry);
  }
  template <class... Xs>
  static void multi() {
    kernel_registry::instance().add(multi_role, kernel_key<std::tuple<Xs...>>(), &multi_kernel<group_kernel_of<Xs>...>::entry);
  }
};

/// Compiles and registers the device kernels (their emulated loops) of a
/// function's or an expression's type T.
template <class T>
bool instantiate() {
  kernel_walk<register_entries>::template of<std::remove_cvref_t<T>>::walk();
  return true;
}

}  // namespace fusor::gpu
