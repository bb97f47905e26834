// fusor/backend/gpu/evaluator.hpp — the device lowering of expressions: the
// same nodes and the same functors as the host's evaluators, in a form a CUDA
// kernel can take as a parameter.
//
// A device evaluator is an aggregate: trivially copyable (kernel parameters
// are copied bytewise), index-addressed (a thread asks for element i; there is
// no cursor to move), FUSOR_HD throughout, and identical in g++ and nvcc units
// (no member depends on __CUDACC__). Three ways to read element i of the
// collapsed iteration space:
//   dense(i)            every leaf is contiguous along the one merged axis or
//                       broadcast (its stride is 1 or 0): offset i * stride;
//   planar(a, b)        the element at (a, b) of a two-axis space: what a
//                       reduction reads (its indices are constants to nvcc,
//                       so no index array goes to local memory);
//   strided(idx)        the general case: the multi-index of i, a dot product
//                       with each leaf's strides;
//   values<Offset>(v)   from the values of the leaves, handed in a tuple in
//                       leaf order: the form CUB's DeviceTransform calls on
//                       contiguous inputs.
// The emulated device runs the same evaluators in host loops, so the lowering
// (broadcasting, collapsing, strides, casts) is tested on every CI machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "fusor/backend/gpu/tuple.hpp"
#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/shapes.hpp"
#include "fusor/core/collapse.hpp"
#include "fusor/expr/fusion.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/shared/cast.hpp"

namespace fusor::gpu {

/// A strided view of memory: the lowered form of every value read from
/// memory (inputs, shared variables, temporaries, transposed views).
template <class E>
struct leaf {
  using value_type = E;
  static constexpr std::size_t leaves = 1;

  const E* data;
  int slot;
  index_t offset;             ///< where the view starts in the slot, in elements
  index_t strides[max_rank];  ///< element strides along the (collapsed) iteration axes

  FUSOR_INLINE E dense(index_t i) const { return data[i * strides[0]]; }
  FUSOR_INLINE E planar(index_t a, index_t b) const { return data[a * strides[0] + b * strides[1]]; }
  FUSOR_INLINE E strided(const index_t* idx, int rank) const {
    index_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += idx[d] * strides[d];
    return data[offset];
  }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE E values(const Values& v) const {
    return get<Offset>(v);
  }
};

/// The flat index of each element in a constructor's own shape (iota_node).
/// It reads no memory: its value is its offset. It keeps a leaf's members so
/// that merging axes and broadcasting treat it as one, with slot -1 (nothing
/// to bind); a group containing it never takes the DeviceTransform path,
/// which hands leaves their loaded values (see all_contiguous).
struct index {
  using value_type = std::int64_t;
  static constexpr std::size_t leaves = 1;

  const std::int64_t* data;  ///< always null
  int slot;                  ///< always -1
  index_t offset;            ///< always 0
  index_t strides[max_rank];

  FUSOR_INLINE std::int64_t dense(index_t i) const { return i * strides[0]; }
  FUSOR_INLINE std::int64_t planar(index_t a, index_t b) const { return a * strides[0] + b * strides[1]; }
  FUSOR_INLINE std::int64_t strided(const index_t* idx, int rank) const {
    index_t at = 0;
    for (int d = 0; d < rank; ++d) at += idx[d] * strides[d];
    return at;
  }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE std::int64_t values(const Values& v) const {
    return get<Offset>(v);
  }
};

/// A constant, converted once to the type it is used at.
template <class E>
struct scalar {
  using value_type = E;
  static constexpr std::size_t leaves = 0;
  E value;
  FUSOR_INLINE E dense(index_t) const { return value; }
  FUSOR_INLINE E planar(index_t, index_t) const { return value; }
  FUSOR_INLINE E strided(const index_t*, int) const { return value; }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE E values(const Values&) const {
    return value;
  }
};

template <class F, class R, class Casts, class... Children>
struct map;

template <class F, class R, class... Casts, class... Children>
struct map<F, R, type_list<Casts...>, Children...> {
  using value_type = R;
  static constexpr std::size_t leaves = (Children::leaves + ... + 0);

  tuple<Children...> children;

  FUSOR_INLINE R dense(index_t i) const { return dense_(i, std::index_sequence_for<Children...>{}); }
  FUSOR_INLINE R planar(index_t a, index_t b) const { return planar_(a, b, std::index_sequence_for<Children...>{}); }
  FUSOR_INLINE R strided(const index_t* idx, int rank) const {
    return strided_(idx, rank, std::index_sequence_for<Children...>{});
  }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE R values(const Values& v) const {
    return values_<Offset>(v, std::index_sequence_for<Children...>{});
  }

 private:
  /// Leaves before child K: where child K's leaves start in leaf order.
  template <std::size_t K>
  static constexpr std::size_t leaves_before() {
    constexpr std::size_t counts[] = {Children::leaves..., 0};
    std::size_t n = 0;
    for (std::size_t j = 0; j < K; ++j) n += counts[j];
    return n;
  }
  template <std::size_t... K>
  FUSOR_INLINE R dense_(index_t i, std::index_sequence<K...>) const {
    return static_cast<R>(F{}(convert_element<Casts>(get<K>(children).dense(i))...));
  }
  template <std::size_t... K>
  FUSOR_INLINE R planar_(index_t a, index_t b, std::index_sequence<K...>) const {
    return static_cast<R>(F{}(convert_element<Casts>(get<K>(children).planar(a, b))...));
  }
  template <std::size_t... K>
  FUSOR_INLINE R strided_(const index_t* idx, int rank, std::index_sequence<K...>) const {
    return static_cast<R>(F{}(convert_element<Casts>(get<K>(children).strided(idx, rank))...));
  }
  template <std::size_t Offset, class Values, std::size_t... K>
  FUSOR_INLINE R values_(const Values& v, std::index_sequence<K...>) const {
    return static_cast<R>(
        F{}(convert_element<Casts>(get<K>(children).template values<Offset + leaves_before<K>()>(v))...));
  }
};

/// A gate (expr/shape_like.hpp): its child when open. A closed gate's leaves
/// keep slot -1 and stride 0: they bind nothing, and a group with one never
/// takes the DeviceTransform path (its leaves are no arrays).
template <class Child>
struct gate {
  using value_type = typename Child::value_type;
  static constexpr std::size_t leaves = Child::leaves;
  Child child;
  bool open;
  FUSOR_INLINE value_type dense(index_t i) const { return open ? child.dense(i) : value_type(0); }
  FUSOR_INLINE value_type planar(index_t a, index_t b) const { return open ? child.planar(a, b) : value_type(0); }
  FUSOR_INLINE value_type strided(const index_t* idx, int rank) const {
    return open ? child.strided(idx, rank) : value_type(0);
  }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE value_type values(const Values& v) const {
    return open ? child.template values<Offset>(v) : value_type(0);
  }
};

template <class T, class Child>
struct cast {
  using value_type = T;
  static constexpr std::size_t leaves = Child::leaves;
  Child child;
  FUSOR_INLINE T dense(index_t i) const { return convert_element<T>(child.dense(i)); }
  FUSOR_INLINE T planar(index_t a, index_t b) const { return convert_element<T>(child.planar(a, b)); }
  FUSOR_INLINE T strided(const index_t* idx, int rank) const { return convert_element<T>(child.strided(idx, rank)); }
  template <std::size_t Offset, class Values>
  FUSOR_INLINE T values(const Values& v) const {
    return convert_element<T>(child.template values<Offset>(v));
  }
};

// ---------------------------------------------------------------- types

/// The device evaluator type of a node type: fused nodes (map, cast,
/// constants) become evaluator nodes, everything else a leaf reading its slot.
template <class X>
struct evaluator_of {
  using type = leaf<value_type_t<X>>;
};
template <element E>
struct evaluator_of<constant<E>> {
  using type = scalar<E>;
};
template <int N>
struct evaluator_of<iota_node<N>> {
  using type = index;
};
template <class F, class S, class... A>
struct evaluator_of<map_node<F, S, A...>> {
  using type = map<F, typename map_node<F, S, A...>::value_type, typename map_node<F, S, A...>::casts,
                   typename evaluator_of<A>::type...>;
};
template <element T, class A>
struct evaluator_of<cast_node<T, A>> {
  using type = cast<T, typename evaluator_of<A>::type>;
};
template <element T, class N, class D>
struct evaluator_of<size_ratio_node<T, N, D>> {
  using type = scalar<T>;
};
template <class C>
struct evaluator_of<gate_node<C>> {
  using type = gate<typename evaluator_of<C>::type>;
};
template <element T, class L>
struct evaluator_of<zeros_of_node<T, L>> {
  using type = scalar<T>;
};
/// A reference is its target, fused; or, where the target fused would be
/// large, a leaf reading it from memory (expr/fusion.hpp), as on the host.
template <class X>
struct evaluator_of<ref_node<X>> {
  using target = typename ref_node<X>::target_type;
  using type = std::conditional_t<fusor::detail::reads_kept_v<ref_node<X>>, leaf<value_type_t<target>>,
                                  typename evaluator_of<target>::type>;
};
template <class X>
using evaluator_t = typename evaluator_of<X>::type;

/// The element types of an evaluator's leaves, in leaf order (the inputs of
/// a DeviceTransform call).
template <class... L>
struct leaf_types {};
template <class A, class B>
struct concat;
template <class... A, class... B>
struct concat<leaf_types<A...>, leaf_types<B...>> {
  using type = leaf_types<A..., B...>;
};
template <class Ev>
struct leaf_types_of {
  using type = leaf_types<>;
};
template <class E>
struct leaf_types_of<leaf<E>> {
  using type = leaf_types<E>;
};
template <>
struct leaf_types_of<index> {
  using type = leaf_types<std::int64_t>;
};
template <class F, class R, class Casts, class... C>
struct leaf_types_of<map<F, R, Casts, C...>> {
  using type = leaf_types<>;
};
template <class F, class R, class Casts, class C0, class... C>
struct leaf_types_of<map<F, R, Casts, C0, C...>> {
  using type = typename concat<typename leaf_types_of<C0>::type,
                               typename leaf_types_of<map<F, R, Casts, C...>>::type>::type;
};
template <class T, class C>
struct leaf_types_of<cast<T, C>> {
  using type = typename leaf_types_of<C>::type;
};
template <class C>
struct leaf_types_of<gate<C>> {
  using type = typename leaf_types_of<C>::type;
};

// ---------------------------------------------------------------- lowering

/// Visits every array leaf of an evaluator (host side: filling, binding).
template <class E, class G>
void for_each_leaf(leaf<E>& l, G&& g) {
  g(l);
}
template <class G>
void for_each_leaf(index& l, G&& g) {
  g(l);
}
template <class E, class G>
void for_each_leaf(scalar<E>&, G&&) {}
template <class F, class R, class Casts, class... C, class G>
void for_each_leaf(map<F, R, Casts, C...>& m, G&& g) {
  [&]<std::size_t... K>(std::index_sequence<K...>) { (for_each_leaf(get<K>(m.children), g), ...); }(
      std::index_sequence_for<C...>{});
}
template <class T, class C, class G>
void for_each_leaf(cast<T, C>& c, G&& g) {
  for_each_leaf(c.child, g);
}
template <class C, class G>
void for_each_leaf(gate<C>& c, G&& g) {
  for_each_leaf(c.child, g);
}

/// The strides of every leaf as the host lowering needs them while filling:
/// the view's own shape and strides, then against the output.
struct leaf_view {
  dims shape;
  std::array<index_t, max_rank> strides{};
};

/// Fills the device evaluator of node `node` for a plan: each leaf's slot and
/// its strides against `out` (right-aligned broadcasting: missing or
/// length-1 axes get stride 0), in leaf order into `views`. It walks the
/// graph's nodes beside the evaluator's structure, so it depends on the
/// evaluator type alone: fused groups that compute the same thing over
/// different variables share one kernel.
struct evaluator_builder {
  const graph& g;
  const plan& p;
  const dims& out;

  template <class E>
  void fill(leaf<E>& l, int node) const {
    const node_value& v = p.values[static_cast<std::size_t>(node)];
    l.data = nullptr;
    l.slot = v.slot;
    l.offset = v.offset;
    const std::size_t r = out.rank(), lr = v.shape.rank();
    for (std::size_t d = 0; d < max_rank; ++d) l.strides[d] = 0;
    for (std::size_t d = 0; d < r; ++d)
      if (d >= r - lr) {
        const std::size_t ld = d - (r - lr);
        l.strides[d] = v.shape[ld] == 1 ? 0 : v.strides[ld];
      }
  }
  void fill(index& l, int node) const {
    const dims& shape = p.shapes[static_cast<std::size_t>(node)];
    const auto own = c_strides(shape);
    l.data = nullptr;
    l.slot = -1;
    l.offset = 0;
    const std::size_t r = out.rank(), lr = shape.rank();
    for (std::size_t d = 0; d < max_rank; ++d) l.strides[d] = 0;
    for (std::size_t d = 0; d < r; ++d)
      if (d >= r - lr) {
        const std::size_t ld = d - (r - lr);
        l.strides[d] = shape[ld] == 1 ? 0 : own[ld];
      }
  }
  /// A constant, a size ratio (a mean's 1/n), or zeros.
  template <class E>
  void fill(scalar<E>& l, int node) const {
    l.value = fusor::detail::scalar_node_value<E>(g, p.shapes, node);
  }
  template <class C>
  void fill(gate<C>& ev, int node) const {
    ev.open = g[node].arity == 1;
    if (ev.open) {
      fill(ev.child, g[node].child[0]);
    } else {
      ev.child = {};
      for_each_leaf(ev.child, [](auto& l) {
        l.data = nullptr;
        l.slot = -1;
        l.offset = 0;
        for (std::size_t d = 0; d < max_rank; ++d) l.strides[d] = 0;
      });
    }
  }
  template <class F, class R, class Casts, class... C>
  void fill(map<F, R, Casts, C...>& ev, int node) const {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (fill(get<K>(ev.children), g[node].child[K]), ...);
    }(std::index_sequence_for<C...>{});
  }
  template <class T, class C>
  void fill(cast<T, C>& ev, int node) const {
    fill(ev.child, g[node].child[0]);
  }
};

/// The collapsed iteration space of an elementwise step: its rank and
/// extents, whether every leaf reads densely, and the destination's strides
/// when it is a view (an update of part of a variable) rather than contiguous.
struct ew_space {
  int rank = 1;
  index_t n = 0;
  index_t extent[max_rank]{};
  bool dense = false;
  bool out_contiguous = true;
  index_t out_strides[max_rank]{};
};

/// Collapses evaluators filled against `out` (and their destinations:
/// contiguous, or of element strides `*dest`) into the iteration space their
/// kernel walks: one evaluator for a fused group, several for a multi-output
/// pass (contiguous destinations).
template <class... Ev>
ew_space collapse_group(const dims& out, const std::array<index_t, max_rank>* dest, Ev&... ev) {
  constexpr std::size_t k = (Ev::leaves + ... + 0) + 1;
  std::array<std::array<index_t, max_rank>, k> strides{};
  std::array<std::array<index_t, max_rank>*, k> arrays{};
  strides[0] = dest ? *dest : c_strides(out);
  std::size_t j = 1;
  auto gather = [&](auto& l) {
    for (std::size_t d = 0; d < max_rank; ++d) strides[j][d] = l.strides[d];
    ++j;
  };
  (for_each_leaf(ev, gather), ...);
  for (std::size_t a = 0; a < k; ++a) arrays[a] = &strides[a];
  const loop_space s = collapse(out, arrays);
  ew_space e;
  e.rank = static_cast<int>(s.rank);
  e.n = static_cast<index_t>(out.elements());
  for (std::size_t d = 0; d < s.rank; ++d) e.extent[d] = static_cast<index_t>(s.extent[d]);
  e.dense = s.rank == 1;
  if (dest) {
    for (std::size_t d = 0; d < s.rank; ++d) e.out_strides[d] = strides[0][d];
    e.out_contiguous = s.rank == 1 && strides[0][0] == 1;
    e.dense = e.dense && e.out_contiguous;
  }
  j = 1;
  auto scatter = [&](auto& l) {
    for (std::size_t d = 0; d < max_rank; ++d) l.strides[d] = d < s.rank ? strides[j][d] : 0;
    if (s.rank != 1 || (l.strides[0] != 0 && l.strides[0] != 1)) e.dense = false;
    ++j;
  };
  (for_each_leaf(ev, scatter), ...);
  return e;
}

/// The coordinates (a, b) of element i of a space of two axes or fewer.
template <class Index>
struct plane {
  Index a, b;
};
template <class Index>
FUSOR_INLINE plane<Index> plane_of(const ew_space& s, Index i) {
  const Index inner = s.rank == 2 ? static_cast<Index>(s.extent[1]) : Index{1};
  const Index a = i / inner;
  return {a, i - a * inner};
}

/// Element i of a group read through its coordinates: by `planar` where the
/// space has two axes or fewer (constant indices: on a GPU an index array
/// written at run-time positions lives in local memory, and every load's
/// address went through it), through the multi-index otherwise. Index is the
/// arithmetic's type (32-bit where the size allows: a GPU divides those
/// several times faster).
template <class Index, class Ev>
FUSOR_INLINE typename Ev::value_type strided_element(const Ev& ev, const ew_space& s, Index i) {
  if (s.rank <= 2) {
    const plane<Index> p = plane_of(s, i);
    return ev.planar(static_cast<index_t>(p.a), static_cast<index_t>(p.b));
  }
  index_t idx[max_rank];
  for (int d = s.rank - 1; d >= 0; --d) {
    const Index e = static_cast<Index>(s.extent[d]);
    idx[d] = static_cast<index_t>(i % e);
    i /= e;
  }
  return ev.strided(idx, s.rank);
}

/// Element i of a group: dense, or through its coordinates.
template <class Ev>
FUSOR_INLINE typename Ev::value_type element_at(const Ev& ev, const ew_space& s, index_t i) {
  if (s.dense) return ev.dense(i);
  return strided_element(ev, s, i);
}

/// Where element i of a group goes in its destination: i, or (a view) its
/// coordinates times the destination's strides.
FUSOR_INLINE index_t destination_of(const ew_space& s, index_t i) {
  if (s.out_contiguous) return i;
  if (s.rank <= 2) {
    const plane<index_t> p = plane_of(s, i);
    return p.a * s.out_strides[0] + p.b * s.out_strides[1];
  }
  index_t at = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    at += (i % s.extent[d]) * s.out_strides[d];
    i /= s.extent[d];
  }
  return at;
}

/// Points every leaf at its slot's memory for this call.
template <class Ev>
void bind(Ev& ev, void* const* slots) noexcept {
  for_each_leaf(ev, [&](auto& l) {
    using E = typename std::remove_reference_t<decltype(l)>::value_type;
    if (l.slot >= 0) l.data = static_cast<const E*>(slots[l.slot]) + l.offset;  // an index reads no memory
  });
}

}  // namespace fusor::gpu
