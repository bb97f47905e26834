// fusor/expr/fusion.hpp — which references a kernel fuses, and which it
// reads from memory.
//
// Elementwise nodes (maps, casts, constants, gates) are fused into the kernel
// that reads them, and a reference (expr/ref.hpp) is its target: a kernel
// fuses the target where the reference is read. That is what a reference to
// a small elementwise expression should cost, nothing. But a gradient's
// references nest (an adjoint reads another adjoint in several places), and a
// kernel that fuses every one of them computes the tree written out: the
// Hessian-vector product of sum(s * s * m), with m = mean(w) and s =
// sigmoid(m), fused 4.1 million leaves into one kernel (a 56-million-node
// tree, for 619 node types), and no compiler finished it (clang -O0: killed
// at 24 GB). So a reference whose target, fused, would be large is read from
// memory instead: its target is computed once, by a kernel of its own, into
// a temporary (`graph_node::kept`, compile/graph.hpp, which the planner
// honours), and every reader's kernel reads that temporary as a leaf. The
// size is counted with the references below already decided, so each kernel
// stays below the bound, and a decision depends on the target's type alone:
// every backend's evaluator types, the graph and the planner agree on it.
#pragma once

#include <cstddef>
#include <type_traits>

#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"

namespace fusor::detail {

/// The most nodes a kernel fuses through references: more than a first
/// derivative reaches (the perceptron's and the logistic regression's plans
/// are the same with it as without), far less than nested references
/// multiply to, and small enough for a device kernel's parameters (CUDA's
/// 32 764 bytes: at 256 a kept target's device evaluator took 34 752).
inline constexpr std::size_t fused_size_bound = 128;

template <class X>
struct fused_size;
/// Whether the target X of a reference is computed into memory, not fused.
template <class X>
inline constexpr bool kept_in_memory_v = fused_size<X>::value > fused_size_bound;

/// The nodes of X's fused tree: elementwise nodes and what they read, each
/// reference kept in memory counted as the one value it is.
template <class X>
struct fused_size : std::integral_constant<std::size_t, 1> {};  // a value read from memory, or a leaf
template <class F, class S, class... A>
struct fused_size<map_node<F, S, A...>> : std::integral_constant<std::size_t, 1 + (fused_size<A>::value + ... + 0)> {};
template <element T, class A>
struct fused_size<cast_node<T, A>> : std::integral_constant<std::size_t, 1 + fused_size<A>::value> {};
template <class C>
struct fused_size<gate_node<C>> : std::integral_constant<std::size_t, 1 + fused_size<C>::value> {};

/// The name of a reference that is always read from memory, whatever its
/// target's size: ref_node<kept_operand<A>> refers to an A (expr/ref.hpp's
/// names). A function makes them for the operands its reductions share with
/// its products (rewrite/kept_operands.hpp).
template <class A>
struct kept_operand {
  using named_type = A;
};
/// Whether a reference spelled S (ref_node<S>) reads its target from memory.
template <class S>
inline constexpr bool ref_kept_v = kept_in_memory_v<ref_target_t<S>>;
template <class A>
inline constexpr bool ref_kept_v<kept_operand<A>> = true;

template <class X>
struct fused_size<ref_node<X>>
    : std::integral_constant<std::size_t, ref_kept_v<X> ? 1 : fused_size<typename ref_node<X>::target_type>::value> {};

/// Whether a reference of type R is read from memory (its target kept).
template <class R>
inline constexpr bool reads_kept_v = false;
template <class X>
inline constexpr bool reads_kept_v<ref_node<X>> = ref_kept_v<X>;

/// The node a group kernel rooted at X computes: a reference at the root is
/// its target, fused even where it is kept (that kernel is what computes it
/// into memory).
template <class X>
struct fused_root {
  using type = X;
};
template <class X>
struct fused_root<ref_node<X>> {
  using type = typename ref_node<X>::target_type;
};
template <class X>
using fused_root_t = typename fused_root<X>::type;

}  // namespace fusor::detail
