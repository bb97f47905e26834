// fusor/backend/cpu/impl/loop.ipp — the fused loops' set-up over the table
// of their leaves (loop.hpp): broadcasting, merging axes, choosing the row
// loop. Part of fusor's run-time half: included by its header in header-only
// use, compiled once into libfusor under FUSOR_SEPARATE_COMPILATION. Nothing
// here may depend on the unit's instruction set: the batch width arrives as
// a value (vector_traits).
#pragma once

#include <utility>
#include <vector>

#include "fusor/backend/cpu/loop.hpp"

namespace fusor::cpu {

FUSOR_RUNTIME void broadcast_leaves(const leaf_table& t, const dims& out) noexcept {
  for (leaf_view* l : t) broadcast_strides(l->view_shape, l->view_strides, out, l->strides);
}

FUSOR_RUNTIME void set_inner_strides(const leaf_table& t, std::size_t rank) noexcept {
  for (leaf_view* l : t) l->inner = l->strides[rank - 1];
}

FUSOR_RUNTIME loop_space prepare_loop(const dims& shape, std::array<index_t, max_rank>& dest, const leaf_table& t) {
  std::vector<std::array<index_t, max_rank>*> arrays;
  arrays.reserve(t.size() + 1);
  arrays.push_back(&dest);
  for (leaf_view* l : t) arrays.push_back(&l->strides);
  const loop_space s = collapse(shape, arrays.data(), arrays.size());
  set_inner_strides(t, s.rank);
  return s;
}

FUSOR_RUNTIME bool leaves_vectorisable(const leaf_table& t) noexcept {
  for (const leaf_view* l : t)
    if (l->inner != 0 && l->inner != 1) return false;
  return true;
}

FUSOR_RUNTIME bool leaves_dense(const leaf_table& t) noexcept {
  for (const leaf_view* l : t)
    if (l->inner != 1) return false;
  return true;
}

FUSOR_RUNTIME void exchange_inner_axes(loop_space& s, std::array<index_t, max_rank>& dest,
                                       const leaf_table& t) noexcept {
  const std::size_t r = s.rank;
  std::swap(s.extent[r - 1], s.extent[r - 2]);
  std::swap(dest[r - 1], dest[r - 2]);
  for (leaf_view* l : t) {
    std::swap(l->strides[r - 1], l->strides[r - 2]);
    l->inner = l->strides[r - 1];
  }
}

FUSOR_RUNTIME void prepare_elementwise(elementwise_layout& l, const leaf_table& t, const vector_traits& k,
                                       const dims& shape, bool streamable, const std::array<index_t, max_rank>* out,
                                       bool disjoint) {
  l.disjoint = disjoint;
  l.empty = shape.elements() == 0;
  if (l.empty) return;
  broadcast_leaves(t, shape);
  l.out_strides = out ? *out : c_strides(shape);
  l.space = prepare_loop(shape, l.out_strides, t);
  l.n = l.space.extent[l.space.rank - 1];
  l.out_inner = l.out_strides[l.space.rank - 1];
  l.vectorise = k.batches && l.out_inner == 1 && leaves_vectorisable(t);
  if (k.exchange) {
    l.exchanged = l.out_inner == 1 && short_rows(l.space, k.width) && short_rows_cached(l.space, k.bytes);
    if (l.exchanged) {
      exchange_inner_axes(l.space, l.out_strides, t);
      l.n = l.space.extent[l.space.rank - 1];
      l.out_inner = l.out_strides[l.space.rank - 1];
      l.vectorise = true;
    }
  }
  l.dense_rows = l.vectorise && !l.exchanged && leaves_dense(t);
  l.stream = streamable && l.vectorise && !l.exchanged && k.streams &&
             shape.elements() * k.bytes > last_level_cache_bytes();
}

}  // namespace fusor::cpu
