// fusor/compile/gather.hpp — what a gather step (fusor::take) and its
// gradient's scatter step do, as data both backends execute: which slab of
// the operand each index selects, where it goes in the result, and how the
// indices are read and checked.
//
// The result is contiguous: for each position o of the axes before `axis`,
// and each index j, one block — the operand's slab at (o, indices[j]) over
// the axes after `axis` — is copied to block (o, j). A block whose elements
// are contiguous in the operand is one memcpy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/region.hpp"
#include "fusor/compile/shapes.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/memory/strided.hpp"

namespace fusor::detail {

struct gather_layout {
  std::string what;  ///< the node's text, for messages
  int axis = 0;
  std::size_t element_bytes = 0;
  index_t axis_length = 0;
  index_t axis_stride = 0;              ///< the operand's stride along the axis, in elements
  std::vector<index_t> outer;           ///< per outer position: its offset in the operand
  strided_view block;                   ///< one block: extents and strides (offsets set per block)
  index_t block_elements = 0;
  bool block_contiguous = true;         ///< the block is contiguous in the operand: one memcpy
  // The indices: a view of their slot, of any integer dtype.
  dtype index_type{};
  node_value index_view;
  std::size_t index_count = 0;
  std::size_t index_slot_bytes = 0;
};

/// The layout of node n's blocks over operand `a` (of dtype `type`), with the
/// indices of node n's child 1.
inline gather_layout layout_over(const graph& g, const plan& p, const graph_node& n, const node_value& a, dtype type) {
  gather_layout l;
  l.what = n.text;
  const node_value& idx = p.values[static_cast<std::size_t>(n.child[1])];
  const auto axis = static_cast<std::size_t>(normalise_axis(static_cast<int>(n.params[0]), a.shape.rank(), n.text));
  l.axis = static_cast<int>(axis);
  l.element_bytes = size_of(type);
  l.axis_length = static_cast<index_t>(a.shape[axis]);
  l.axis_stride = a.strides[axis];
  // Outer offsets: every position of the axes before `axis`.
  dims outer_shape;
  for (std::size_t d = 0; d < axis; ++d) outer_shape.push_back(a.shape[d]);
  const std::size_t outer_count = outer_shape.elements();
  l.outer.reserve(outer_count);
  std::array<index_t, max_rank> at{};
  for (std::size_t o = 0; o < outer_count; ++o) {
    index_t off = a.offset;
    for (std::size_t d = 0; d < axis; ++d) off += at[d] * a.strides[d];
    l.outer.push_back(off);
    for (std::size_t d = axis; d-- > 0;) {
      if (++at[d] < static_cast<index_t>(outer_shape[d])) break;
      at[d] = 0;
    }
  }
  // One block: the axes after `axis`.
  dims block_shape;
  for (std::size_t d = axis + 1; d < a.shape.rank(); ++d) block_shape.push_back(a.shape[d]);
  const auto cs = c_strides(block_shape);
  l.block.rank = static_cast<int>(block_shape.rank());
  for (std::size_t d = 0; d < block_shape.rank(); ++d) {
    l.block.extent[d] = static_cast<index_t>(block_shape[d]);
    l.block.src_strides[d] = a.strides[axis + 1 + d];
    l.block.dst_strides[d] = cs[d];
    if (block_shape[d] != 1 && a.strides[axis + 1 + d] != cs[d]) l.block_contiguous = false;
  }
  l.block_elements = l.block.elements();
  l.index_type = g[n.child[1]].type;
  l.index_view = idx;
  l.index_count = idx.shape.elements();
  l.index_slot_bytes = p.slots[static_cast<std::size_t>(idx.slot)].bytes;
  return l;
}

inline gather_layout make_gather_layout(const graph& g, const plan& p, const step_info& s) {
  const graph_node& n = g[s.node];
  return layout_over(g, p, n, p.values[static_cast<std::size_t>(n.child[0])], g[n.child[0]].type);
}

/// A scatter step (the gradient of take): the same blocks with the roles
/// exchanged. Its destination (of the take operand's shape, contiguous) is
/// the "operand" whose slabs the indices name; the adjoint (of the take's
/// shape, contiguous, at `source_offset` in slot `source`) is the "result".
struct scatter_layout {
  gather_layout blocks;
  dtype type{};
  int source = -1, index_slot = -1, dest = -1;
  index_t source_offset = 0;
  std::size_t dest_bytes = 0;
};
inline scatter_layout make_scatter_layout(const graph& g, const plan& p, const step_info& s) {
  const graph_node& n = g[s.node];
  node_value dest;
  dest.slot = s.dest;
  dest.shape = p.shapes[static_cast<std::size_t>(s.node)];
  dest.strides = c_strides(dest.shape);
  scatter_layout l;
  l.blocks = layout_over(g, p, n, dest, n.type);
  l.type = n.type;
  l.source = s.region.slot;
  l.source_offset = s.region.offset;
  l.index_slot = s.reads[1];
  l.dest = s.dest;
  l.dest_bytes = p.slots[static_cast<std::size_t>(s.dest)].bytes;
  return l;
}

/// Reads the indices from host memory (`slot`: the start of their slot) into
/// `out`, negative ones counted from the end; throws index_error, naming the
/// index, the axis and its length, for one outside the axis.
inline void read_indices(const gather_layout& l, const void* slot, std::vector<std::int64_t>& out) {
  out.resize(l.index_count);
  // NumPy's loop checks every index once per element of the axes before the
  // taken one: with one of those empty it checks none
  // (np.take(np.zeros((0, 3)), [5], axis=1) has shape (0, 1)); with only axes
  // after it empty it still checks them all (np.take(np.zeros((3, 0)), [7],
  // axis=0) raises). Both found by the differential tests. An empty axis
  // taken from is an error as well.
  if (l.outer.empty()) {
    std::fill(out.begin(), out.end(), std::int64_t{0});
    return;
  }
  visit(l.index_type, [&](auto zero) {
    using I = decltype(zero);
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* base = static_cast<const I*>(slot);
      for_each_strided(l.index_view, [&](std::size_t j, index_t at) {
        const auto raw = static_cast<std::int64_t>(base[at]);
        const std::int64_t k = raw < 0 ? raw + l.axis_length : raw;
        if (k < 0 || k >= l.axis_length)
          throw index_error(l.what + ": index " + std::to_string(raw) + " is out of bounds for axis " +
                            std::to_string(l.axis) + " with size " + std::to_string(l.axis_length));
        out[j] = k;
      });
    }
  });
}

/// Calls f(dst, src) with the element offsets of every block: in the result
/// and in the operand.
template <class F>
void for_each_block(const gather_layout& l, const std::vector<std::int64_t>& indices, F&& f) {
  // An empty block moves nothing (an axis after the taken one is empty; its
  // indices were still checked), and its buffers may be null.
  if (l.block_elements == 0) return;
  index_t dst = 0;
  for (index_t outer : l.outer)
    for (std::int64_t k : indices) {
      f(dst, outer + static_cast<index_t>(k) * l.axis_stride);
      dst += l.block_elements;
    }
}

}  // namespace fusor::detail
