// fusor/backend/cpu/lower.hpp — turns an expression tree into an evaluator
// tree for one evaluation: leaves become strided views of the values bound now,
// elementwise nodes become fused evaluators, and nodes that cannot be fused
// (reductions, dot, reshapes and permutations of compound expressions) are
// computed into workspace temporaries first and read as views.
//
// A context provides `workspace& ws()` and
// `template <element T, int N> leaf<T> bind(const input<T, N>&)`.
#pragma once

#include <chrono>
#include <string>
#include <type_traits>

#include "fusor/backend/cpu/blas.hpp"
#include "fusor/backend/cpu/evaluator.hpp"
#include "fusor/backend/cpu/loop.hpp"
#include "fusor/backend/cpu/reduce.hpp"
#include "fusor/backend/cpu/workspace.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_ops.hpp"

namespace fusor::cpu {

/// Times one kernel run during lowering into the workspace's profile, if any.
template <class Ctx, class Name, class Body>
void profiled(Ctx& ctx, Name&& name, double bytes, Body&& body) {
  profile_report* p = ctx.ws().profile;
  if (!p) {
    body();
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  body();
  p->record(name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), bytes);
}

template <class T>
inline constexpr bool is_leaf_v = false;
template <class E>
inline constexpr bool is_leaf_v<leaf<E>> = true;

// Declarations first: lowering recurses through every node kind.
template <class Ctx, element T, int N>
leaf<T> lower(const input<T, N>& n, Ctx& ctx);
template <class Ctx, class T>
leaf<element_type_of<T>> lower(const shared_leaf<T>& n, Ctx& ctx);
template <class Ctx, element E>
scalar_leaf<E> lower(const constant<E>& n, Ctx& ctx);
template <class Ctx, class F, class R, class... C, class... A>
auto lower(const map_node<F, R, type_list<C...>, A...>& n, Ctx& ctx);
template <class Ctx, element T, class A>
auto lower(const cast_node<T, A>& n, Ctx& ctx);
template <class Ctx, class Op, class A, int R>
auto lower(const reduce_node<Op, A, R>& n, Ctx& ctx);
template <class Ctx, class A>
auto lower(const transpose_node<A>& n, Ctx& ctx);
template <class Ctx, class A, int N>
auto lower(const reshape_node<A, N>& n, Ctx& ctx);
template <class Ctx, class A, class B>
auto lower(const dot_node<A, B>& n, Ctx& ctx);

/// Computes an evaluator into a fresh contiguous workspace temporary.
template <class Ctx, class Ev>
leaf<typename Ev::value_type> materialize(Ev ev, Ctx& ctx) {
  using E = typename Ev::value_type;
  if constexpr (is_leaf_v<Ev>) {
    // A contiguous view needs no copy.
    if (ev.view_strides == c_strides(ev.view_shape) || ev.view_shape.elements() <= 1) return ev;
  }
  const dims shape = ev.shape();
  E* p = ctx.ws().template allocate<E>(shape.elements());
  ev.broadcast_to(shape);
  profiled(
      ctx, [] { return std::string("materialise a temporary"); }, double(shape.elements() * sizeof(E) * 2),
      [&] { run_elementwise(p, shape, ev); });
  return leaf<E>::contiguous(p, shape);
}

template <class Ctx, class Ev>
auto materialize_if_compound(Ev ev, Ctx& ctx) {
  if constexpr (is_leaf_v<Ev>) return ev;
  else return materialize(std::move(ev), ctx);
}

template <class Ctx, element T, int N>
leaf<T> lower(const input<T, N>& n, Ctx& ctx) {
  return ctx.bind(n);
}

template <class Ctx, class T>
leaf<element_type_of<T>> lower(const shared_leaf<T>& n, Ctx&) {
  const auto& record = *n.variable().record();
  if (!record.has_value())
    throw value_error(record.describe() + " has no value (taken with take_value()); it cannot be read by " +
                      n.str());
  const auto& a = record.storage();
  return leaf<element_type_of<T>>::contiguous(a.data(), a.shape());
}

template <class Ctx, element E>
scalar_leaf<E> lower(const constant<E>& n, Ctx&) {
  return scalar_leaf<E>{n.value(), {}};
}

namespace detail {
/// NumPy refuses integers to negative integer powers; so does fusor, before
/// any kernel writes: the exponent's minimum is found by a fused reduction over
/// it (a constant is just read). Unsigned exponents need no check.
template <class Node, class Ev>
void refuse_negative_exponent(const Node& n, const Ev& exponent) {
  using R = typename Node::value_type;
  R lowest{};
  if constexpr (is_scalar_leaf_v<Ev>) {
    lowest = convert_element<R>(exponent.value);
  } else {
    cast_eval<R, Ev> e{exponent};  // the exponent as the power computes it
    const dims in = e.shape();
    if (in.elements() == 0) return;
    dims one;
    for (std::size_t d = 0; d < in.rank(); ++d) one.push_back(1);
    reduce_into<red::min, R>(&lowest, one, in, e, n.str());
  }
  if (lowest < R(0))
    throw value_error(n.str() + ": integers to negative integer powers are not allowed (an exponent is " +
                      std::to_string(lowest) + "), as in NumPy; compute in floating point instead, e.g. "
                      "pow(cast<double>(base), exponent)");
}

}  // namespace detail

template <class Ctx, class F, class R, class... C, class... A>
auto lower(const map_node<F, R, type_list<C...>, A...>& n, Ctx& ctx) {
  using Ev = map_eval<F, R, type_list<C...>, decltype(lower(std::declval<const A&>(), ctx))...>;
  Ev ev{std::apply([&](const auto&... a) { return std::make_tuple(lower(a, ctx)...); }, n.args()), {}};
  // The broadcast shape, or an error naming both shapes and the operation.
  dims shape;
  bool first = true;
  std::apply(
      [&](const auto&... c) {
        (
            [&] {
              if (first) {
                shape = c.shape();
                first = false;
                return;
              }
              dims next;
              if (!try_broadcast(shape, c.shape(), next))
                throw shape_error("operands could not be broadcast together in " + n.str() + ": shapes " +
                                  shape.str() + " and " + c.shape().str());
              shape = next;
            }(),
            ...);
      },
      ev.children);
  if (!fits(shape)) throw shape_error(n.str() + ": the broadcast " + too_large(shape, dtype_of<R>));
  ev.out_shape = shape;
  if constexpr (std::is_same_v<F, fn::power> && std::is_signed_v<R> && std::is_integral_v<R>)
    detail::refuse_negative_exponent(n, std::get<1>(ev.children));
  return ev;
}

template <class Ctx, element T, class A>
auto lower(const cast_node<T, A>& n, Ctx& ctx) {
  return cast_eval<T, decltype(lower(n.arg(), ctx))>{lower(n.arg(), ctx)};
}

namespace detail {
inline int normalise_axis(int axis, std::size_t rank, const std::string& what) {
  const int r = static_cast<int>(rank);
  if (axis < -r || axis >= r)
    throw shape_error(what + ": axis " + std::to_string(axis) + " is out of bounds for an operand of rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}
}  // namespace detail

template <class Ctx, class Op, class A, int R>
auto lower(const reduce_node<Op, A, R>& n, Ctx& ctx) {
  using V = typename reduce_node<Op, A, R>::value_type;
  token_sink tokens;
  structural_tokens(n, tokens);
  if (const auto* hit = ctx.ws().recall(tokens)) return leaf<V>::contiguous(static_cast<const V*>(hit->data), hit->shape);
  auto ev = lower(n.arg(), ctx);
  const dims in = ev.shape();
  std::uint32_t mask = 0;
  if (n.all_axes()) {
    mask = in.rank() >= 32 ? ~0u : ((1u << in.rank()) - 1u);
  } else {
    for (int i = 0; i < n.axis_count(); ++i) {
      const int a = detail::normalise_axis(n.axis(i), in.rank(), n.str());
      if (mask & (1u << a)) throw shape_error(n.str() + ": axis " + std::to_string(a) + " is repeated");
      mask |= 1u << a;
    }
  }
  dims keep, result;
  for (std::size_t d = 0; d < in.rank(); ++d) {
    const bool reduced = (mask >> d) & 1u;
    keep.push_back(reduced ? 1 : in[d]);
    if (!reduced) result.push_back(in[d]);
    else if (n.keeps_dims()) result.push_back(1);
  }
  const std::size_t slot = ctx.ws().mark();
  V* out = ctx.ws().template allocate<V>(keep.elements());
  if constexpr (std::is_same_v<Op, red::nanmean>) {
    double* counts = ctx.ws().template allocate<double>(keep.elements());
    using E = typename decltype(ev)::value_type;
    profiled(
        ctx, [&] { return n.str(); }, double(in.elements() * sizeof(E) * 2 + keep.elements() * sizeof(V)),
        [&] { reduce_into<Op, V>(out, keep, in, ev, n.str(), counts); });
  } else if constexpr (std::is_same_v<Op, red::argmax> || std::is_same_v<Op, red::argmin>) {
    using E = typename decltype(ev)::value_type;
    E* best = ctx.ws().template allocate<E>(keep.elements());
    const int axis = n.all_axes() ? -1 : detail::normalise_axis(n.axis(0), in.rank(), n.str());
    profiled(
        ctx, [&] { return n.str(); }, double(in.elements() * sizeof(E) + keep.elements() * sizeof(V)),
        [&] { arg_reduce_into<Op>(out, best, keep, in, axis, ev, n.str()); });
  } else {
    using E = typename decltype(ev)::value_type;
    profiled(
        ctx, [&] { return n.str(); }, double(in.elements() * sizeof(E) + keep.elements() * sizeof(V)),
        [&] { reduce_into<Op, V>(out, keep, in, ev, n.str()); });
  }
  ctx.ws().remember(tokens, slot, out, result);
  return leaf<V>::contiguous(out, result);
}

template <class Ctx, class A>
auto lower(const transpose_node<A>& n, Ctx& ctx) {
  auto view = materialize_if_compound(lower(n.arg(), ctx), ctx);
  const std::size_t r = view.view_shape.rank();
  std::array<int, max_rank> perm{};
  if (n.reverses()) {
    for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<int>(r - 1 - i);
  } else {
    if (static_cast<std::size_t>(n.count()) != r)
      throw shape_error(n.str() + ": the permutation has " + std::to_string(n.count()) +
                        " axes, the operand has rank " + std::to_string(r));
    std::uint32_t seen = 0;
    for (std::size_t i = 0; i < r; ++i) {
      const int a = detail::normalise_axis(n.perm(static_cast<int>(i)), r, n.str());
      if (seen & (1u << a)) throw shape_error(n.str() + ": axis " + std::to_string(a) + " is repeated");
      seen |= 1u << a;
      perm[i] = a;
    }
  }
  auto out = view;
  for (std::size_t i = 0; i < r; ++i) {
    out.view_shape[i] = view.view_shape[static_cast<std::size_t>(perm[i])];
    out.view_strides[i] = view.view_strides[static_cast<std::size_t>(perm[i])];
  }
  return out;
}

template <class Ctx, class A, int N>
auto lower(const reshape_node<A, N>& n, Ctx& ctx) {
  auto view = materialize(lower(n.arg(), ctx), ctx);  // contiguous
  const std::size_t total = view.view_shape.elements();
  using V = typename decltype(view)::value_type;
  dims shape;
  int infer = -1;
  for (int i = 0; i < N; ++i) {
    const index_t e = n.extent(i);
    if (e == -1) {
      if (infer >= 0) throw shape_error(n.str() + ": only one extent may be -1");
      infer = i;
      shape.push_back(1);
    } else if (e < 0) {
      throw shape_error(n.str() + ": negative extent " + std::to_string(e));
    } else {
      shape.push_back(static_cast<std::size_t>(e));
    }
  }
  // The requested shape must be a possible array before its element count
  // means anything: a product taken modulo 2^64 would accept (2^62 + 1, 4) for
  // four elements.
  if (!fits(shape, sizeof(V))) throw shape_error(n.str() + ": " + too_large(shape, dtype_of<V>));
  const std::size_t known = shape.elements();  // with the -1 extent counted as 1
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      throw shape_error(n.str() + ": cannot reshape " + view.view_shape.str() + " (" + std::to_string(total) +
                        " elements)");
    shape[static_cast<std::size_t>(infer)] = total / known;
  } else if (known != total) {
    throw shape_error(n.str() + ": cannot reshape an operand of shape " + view.view_shape.str() + " (" +
                      std::to_string(total) + " elements) into " + shape.str());
  }
  return leaf<V>::contiguous(view.data, shape);
}

template <class Ctx, class A, class B>
auto lower(const dot_node<A, B>& n, Ctx& ctx) {
  using V = typename dot_node<A, B>::value_type;
  token_sink tokens;
  structural_tokens(n, tokens);
  if (const auto* hit = ctx.ws().recall(tokens)) return leaf<V>::contiguous(static_cast<const V*>(hit->data), hit->shape);
  // A matrix operand that is the transpose of contiguous memory goes to BLAS
  // as is, with a transpose flag; anything else is made contiguous first.
  bool trans_a = false, trans_b = false;
  auto as_v = [&](auto ev, bool& trans) {
    using Ev = decltype(ev);
    if constexpr (std::is_same_v<typename Ev::value_type, V> && is_leaf_v<Ev>) {
      if (ev.view_shape.rank() == 2 && ev.view_shape[0] > 1 && ev.view_shape[1] > 1 && ev.view_strides[0] == 1 &&
          ev.view_strides[1] == static_cast<index_t>(ev.view_shape[0])) {
        trans = true;
        return ev;
      }
    }
    if constexpr (std::is_same_v<typename Ev::value_type, V>) return materialize(std::move(ev), ctx);
    else return materialize(cast_eval<V, Ev>{std::move(ev)}, ctx);
  };
  auto a = as_v(lower(n.lhs(), ctx), trans_a);
  auto b = as_v(lower(n.rhs(), ctx), trans_b);
  const dims& sa = a.view_shape;
  const dims& sb = b.view_shape;
  if ((sa.rank() != 1 && sa.rank() != 2) || (sb.rank() != 1 && sb.rank() != 2))
    throw rank_error(n.str() + ": operands must be vectors or matrices; got shapes " + sa.str() + " and " + sb.str());
  const std::size_t m = sa.rank() == 2 ? sa[0] : 1;
  const std::size_t inner_a = sa[sa.rank() - 1];
  const std::size_t inner_b = sb[0];
  const std::size_t k = sb.rank() == 2 ? sb[1] : 1;
  if (inner_a != inner_b)
    throw shape_error(n.str() + ": shapes " + sa.str() + " and " + sb.str() + " not aligned: " +
                      std::to_string(inner_a) + " (dim " + std::to_string(sa.rank() - 1) + ") != " +
                      std::to_string(inner_b) + " (dim 0)");
  dims result;
  if (sa.rank() == 2) result.push_back(m);
  if (sb.rank() == 2) result.push_back(k);
  if (!fits(result, sizeof(V))) throw shape_error(n.str() + ": the result's " + too_large(result, dtype_of<V>));
  const std::size_t slot = ctx.ws().mark();
  V* out = ctx.ws().template allocate<V>(m * k);
  profiled(
      ctx, [&] { return n.str(); }, double((m * inner_a + inner_a * k + m * k) * sizeof(V)),
      [&] { matmul(a.data, b.data, out, m, inner_a, k, trans_a, trans_b); });
  ctx.ws().remember(tokens, slot, out, result);
  return leaf<V>::contiguous(out, result);
}

}  // namespace fusor::cpu
