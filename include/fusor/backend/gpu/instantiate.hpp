// fusor/backend/gpu/instantiate.hpp — compiling and registering the device
// kernels of a function's or an expression's type, in a unit that asks for a
// device (registry.hpp says why only there).
//
// The walk below visits the node types of a type as the graph builder
// (compile/graph.hpp) does and names, for each, the kernels the builder asks
// a backend for: a group kernel for every root and every operand read from
// memory, a reduction kernel for every reduction, a dot kernel, an exponent
// check. A policy decides what naming one does: here, registering the device
// kernel entry (its emulated loop); in a unit nvcc compiles
// (fusor/gpu/cuda/instantiate.cuh), also compiling and registering its CUDA
// launcher. The walk may name more kernels than a graph uses (a closed
// gate's operand, a selection's operand read only for its shape); never fewer.
//
// Portable: g++ compiles it.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/backend/gpu/registry.hpp"
#include "fusor/expr/fusion.hpp"
#include "fusor/function.hpp"
#include "fusor/rewrite/stable.hpp"

namespace fusor::gpu {

template <class Policy>
struct kernel_walk {
  template <class X>
  struct children;

  /// Node X and every node below it (X itself is fused into whatever reads it;
  /// a reference's target kept in memory is computed there, expr/fusion.hpp).
  /// Walked once per node type in a program: what a type registers never
  /// changes, and a gradient's nested references, walked again at each of
  /// their occurrences, made the walk as long as the tree written out (9 s
  /// for one second derivative, 197 s under the sanitizers).
  template <class X>
  static void node() {
    [[maybe_unused]] static const bool walked = (walk_node<X>(), true);
  }
  template <class X>
  static void walk_node() {
    if constexpr (fusor::detail::reads_kept_v<X>) {
      root<typename X::target_type>();
    } else if constexpr (is_ref_v<X>) {
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

  /// What X holds (expr/node.hpp): a sub-expression read from memory is
  /// computed into memory first; one fused into X is walked as X's node. A
  /// dot's operand of another dtype is read through a cast, as the graph
  /// builder adds it (compile/graph.hpp).
  template <class X>
  struct children {
    template <bool FromMemory, class H>
    static void held() {
      if constexpr (!FromMemory) node<H>();
      else if constexpr (!is_dot_v<X> || std::is_same_v<value_type_t<H>, value_type_t<X>>) root<H>();
      else root<cast_node<value_type_t<X>, H>>();
    }
    static void walk() {
      if constexpr (X::holds) {
        using Held = std::remove_cvref_t<decltype(std::declval<const X&>().held())>;
        []<std::size_t... K>(std::index_sequence<K...>) {
          (held<((X::from_memory >> K) & 1u) != 0, std::tuple_element_t<K, Held>>(), ...);
        }(fusor::detail::indices_of<Held>);
      }
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
/// what looks up a CUDA launcher on a real device. Host code only: empty in
/// nvcc's device pass (core/config.hpp), where the emulated loops are not
/// instantiated; the CUDA kernels are, through their launchers
/// (gpu/cuda/instantiate.cuh).
struct register_entries {
#if FUSOR_DEVICE_PASS
  template <class X>
  static void group() {}
  template <class X>
  static void reduce() {}
  template <class X>
  static void dot() {}
  template <class X>
  static void check() {}
  template <class... Xs>
  static void multi() {}
#else
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
#endif
};

/// Compiles and registers the device kernels (their emulated loops) of a
/// function's or an expression's type T.
template <class T>
bool instantiate() {
  kernel_walk<register_entries>::template of<std::remove_cvref_t<T>>::walk();
  return true;
}

}  // namespace fusor::gpu
