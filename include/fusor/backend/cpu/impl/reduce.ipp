// fusor/backend/cpu/impl/reduce.ipp — a reduction's set-up over the table of
// its operand's leaves (reduce.hpp). Part of fusor's run-time half: included
// by its header in header-only use, compiled once into libfusor under
// FUSOR_SEPARATE_COMPILATION. The batch width arrives as a value: the
// library's instruction set may differ from the unit's.
#pragma once

#include "fusor/backend/cpu/reduce.hpp"

namespace fusor::cpu {

FUSOR_RUNTIME void prepare_reduction(reduce_layout& l, const leaf_table& t, const dims& keep, const dims& in,
                                     bool batches, std::size_t width, std::size_t bytes) {
  l.keep = keep;
  l.in = in;
  l.nout = keep.elements();
  if (in.elements() == 0) return;
  broadcast_leaves(t, in);
  l.acc = c_strides(keep);
  for (std::size_t d = 0; d < in.rank(); ++d)
    if (keep[d] == 1) l.acc[d] = 0;
  l.space = prepare_loop(in, l.acc, t);
  l.n = l.space.extent[l.space.rank - 1];
  l.acc_inner = l.acc[l.space.rank - 1];
  // The vector loops keep the accumulators' row contiguous (or reduce the
  // row to one element); every leaf steps by 0 or 1 along it.
  l.vectorise = (l.acc_inner == 0 || l.acc_inner == 1) && leaves_vectorisable(t);
  l.leaves_dense = l.vectorise && leaves_dense(t);
  if (!batches) return;
  const std::size_t r = l.space.rank;
  // Rows shorter than a batch, reduced, with a kept axis outside them whose
  // results are contiguous (a softmax's max and sum over ten classes, for 64
  // samples): the two axes are exchanged, so that the loop runs along the
  // kept axis, vectorised, and accumulates across the short reduced axis in
  // registers (run_blocks). A leaf that now steps by neither 0 nor 1 element
  // is read lane by lane (leaf::load).
  // Short rows kept whole, with nothing reduced outside them (a gradient's
  // sum_to onto its own shape): exchanged the same way, the results are
  // computed a batch at a time and written `n` elements apart.
  // (The reduced rows are walked in blocks (run_blocks): any length. The
  // kept ones are walked once per element of the short row: only a block
  // that stays in cache, short_rows_cached.)
  const bool exchange = short_rows(l.space, width);
  const bool reduced = exchange && l.acc_inner == 0 && l.acc[r - 2] == 1;
  const bool kept = exchange && l.acc_inner == 1 && l.acc[r - 2] != 0 && short_rows_cached(l.space, bytes);
  if (reduced || kept) {
    exchange_inner_axes(l.space, l.acc, t);
    l.n = l.space.extent[r - 1];
    l.acc_inner = l.acc[r - 1];
    l.vectorise = true;
    l.leaves_dense = false;
    l.strided_rows = true;
  }
  l.by_blocks = l.vectorise && l.acc_inner == 1 && r >= 2 && l.acc[r - 2] == 0;
}

}  // namespace fusor::cpu
