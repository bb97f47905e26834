// fusor/backend/gpu/reduce.hpp — reductions as device kernels see them: the
// geometry of a reduction (which axes are kept, which reduced) and the
// reduction of one output's elements, written once, FUSOR_HD, for the CUDA
// kernels (each thread a share of the elements, then a block reduction of the
// partials) and the emulated device (one share: all of them, in order).
// The operand is read through its evaluator: never materialised. Portable.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "fusor/backend/gpu/evaluator.hpp"
#include "fusor/expr/reduction.hpp"

namespace fusor::gpu {

/// The iteration space of a reduction: the operand's (collapsed) axes, each
/// kept or reduced. Output o has its kept coordinates in row-major order, and
/// the output array is contiguous over them; reduced element j has its
/// reduced coordinates in row-major order.
struct red_space {
  int rank = 0;
  index_t extent[max_rank]{};
  int kept_rank = 0, red_rank = 0;
  int kept_axis[max_rank]{};
  int red_axis[max_rank]{};
  index_t nout = 0;    ///< outputs
  index_t nred = 0;    ///< operand elements per output
  index_t chunks = 1;  ///< blocks sharing one output's elements (CUDA; 1 on the emulation)
  /// Each thread takes one output and walks its elements (see by_columns).
  bool by_columns = false;
};

/// Threads per block of fusor's CUDA reduction kernels (the chunking below
/// counts in them).
inline constexpr int reduce_block_threads = 256;

/// How many ways each of `blocks` blocks' outputs is split between blocks so
/// that about `wanted` blocks run, none with fewer than `least` of an
/// output's `nred` elements (at most 1024).
inline index_t split_count(index_t blocks, index_t wanted, index_t nred, index_t least) {
  if (blocks <= 0 || nred <= 0 || blocks >= wanted) return 1;
  const index_t by_size = (nred + least - 1) / least;
  const index_t by_device = (wanted + blocks - 1) / blocks;
  const index_t c = by_size < by_device ? by_size : by_device;
  return c < 1 ? 1 : (c > 1024 ? 1024 : c);
}

/// How many blocks share one output's elements: enough blocks to fill a
/// device of `processors` multiprocessors when there are few outputs, none
/// with fewer than 8192 elements.
inline index_t reduction_chunks(index_t nout, index_t nred, int processors) {
  return split_count(nout, 4 * static_cast<index_t>(processors), nred, 8192);
}

/// Blocks of reduce_block_threads outputs each, in a reduction by columns.
FUSOR_INLINE index_t column_blocks(index_t nout) { return (nout + reduce_block_threads - 1) / reduce_block_threads; }

/// The same for a reduction by columns: each block of columns' rows split
/// between `chunks` blocks, each thread walking at least 64 rows.
inline index_t column_chunks(index_t nout, index_t nred, int processors) {
  return split_count(column_blocks(nout), 8 * static_cast<index_t>(processors), nred, 64);
}

/// Whether a reduction's outputs are better shared out a warp each than a
/// block each: outputs of at most 8192 elements, not split between blocks.
/// A block per row of 4096 (`sum(X, 1)`) spent as long on its block-wide
/// merge and on starting as on reading (0.70x of the copy ceiling on an
/// H100); a warp merges by shuffles, and a block takes eight outputs.
inline bool by_warps(const red_space& s) { return !s.by_columns && s.chunks == 1 && s.nred <= 8192; }

/// Whether a reduction is better read by columns: two axes, the outer one
/// reduced and the inner one kept (sum(X, 0) of a row-major X), every leaf
/// at least as close together along the kept axis as along the reduced one,
/// and enough outputs to fill a warp. Then neighbouring threads, each taking
/// one output, read neighbouring elements; sharing one output's elements
/// between a block's threads instead reads one element per 32-byte sector
/// (`sum(X, 0)` at 0.32 TB/s on an H100).
template <class Ev>
bool by_columns(const red_space& s, Ev& ev) {
  if (s.rank != 2 || s.red_rank != 1 || s.red_axis[0] != 0 || s.nout < 32) return false;
  bool closer = true;
  for_each_leaf(ev, [&](auto& l) {
    const index_t outer = l.strides[0] < 0 ? -l.strides[0] : l.strides[0];
    const index_t inner = l.strides[1] < 0 ? -l.strides[1] : l.strides[1];
    if (outer != 0 && inner > outer) closer = false;
  });
  return closer;
}

/// The multi-index of (output o, reduced element j).
FUSOR_INLINE void coordinates(const red_space& s, index_t o, index_t j, index_t* idx) {
  for (int k = s.kept_rank - 1; k >= 0; --k) {
    const int d = s.kept_axis[k];
    idx[d] = o % s.extent[d];
    o /= s.extent[d];
  }
  for (int k = s.red_rank - 1; k >= 0; --k) {
    const int d = s.red_axis[k];
    idx[d] = j % s.extent[d];
    j /= s.extent[d];
  }
}

/// The accumulator of a reduction: its value, plus what some operations
/// carry beside it (nanmean's count of numbers; argmax's position).
template <class Op, class R, class V>
struct accumulator {
  static constexpr bool is_arg = std::is_same_v<Op, red::argmax> || std::is_same_v<Op, red::argmin>;
  static constexpr bool counts = std::is_same_v<Op, red::nanmean>;
  using value_type = std::conditional_t<is_arg, V, R>;

  value_type value;
  double count;       ///< nanmean: elements that are not NaN
  std::int64_t index; ///< arg reductions: position of the best element, -1 for none

  FUSOR_INLINE static accumulator identity() {
    accumulator a{};
    if constexpr (!is_arg) a.value = Op::template identity<R>();
    a.count = 0;
    a.index = -1;
    return a;
  }
  /// Takes element x, the j-th of its output's elements.
  FUSOR_INLINE void add(V x, index_t j) {
    if constexpr (is_arg) {
      if (index < 0 || Op::better(x, value)) {
        value = x;
        index = j;
      }
    } else {
      value = Op::combine(value, Op::element(static_cast<R>(x)));
      if constexpr (counts) count += red::count_numbers::element(convert_element<double>(x));
    }
  }
  /// Merges another share of the same output's elements (any order: the
  /// first best position wins, as in a sequential scan).
  FUSOR_INLINE void merge(const accumulator& o) {
    if constexpr (is_arg) {
      if (o.index < 0) return;
      if (index < 0 || Op::better(o.value, value) || (!Op::better(value, o.value) && o.index < index)) {
        value = o.value;
        index = o.index;
      }
    } else {
      value = Op::combine(value, o.value);
      if constexpr (counts) count += o.count;
    }
  }
};

/// Element j of one output of a reduction over one axis, its other axis (if
/// any) fixed at o: the evaluator read through constant indices (an index
/// array written at a run-time position, as `strided` takes, lives in local
/// memory on a GPU, and so did every load's address).
template <class Ev>
struct whole_axis {  ///< one axis, reduced
  const Ev& ev;
  FUSOR_INLINE typename Ev::value_type operator()(index_t j) const { return ev.dense(j); }
};
template <class Ev>
struct along_rows {  ///< axis 1 reduced, axis 0 kept
  const Ev& ev;
  index_t o;
  FUSOR_INLINE typename Ev::value_type operator()(index_t j) const { return ev.planar(o, j); }
};
template <class Ev>
struct along_columns {  ///< axis 0 reduced, axis 1 kept
  const Ev& ev;
  index_t o;
  FUSOR_INLINE typename Ev::value_type operator()(index_t j) const { return ev.planar(j, o); }
};

/// Adds elements j = begin, begin + step, ... < end, read by `at`, to acc,
/// reading four before adding them: four loads in flight per thread instead
/// of one (a full sum on an H100 was latency-bound at 0.45x
/// cub::DeviceReduce's bandwidth). The adds keep their order.
template <class Acc, class At>
FUSOR_INLINE void accumulate_along(Acc& acc, const At& at, index_t begin, index_t end, index_t step) {
  constexpr int unroll = 4;
  index_t j = begin;
  for (; j + (unroll - 1) * step < end; j += unroll * step) {
    decltype(at(j)) v[unroll];
    for (int u = 0; u < unroll; ++u) v[u] = at(j + u * step);
    for (int u = 0; u < unroll; ++u) acc.add(v[u], j + u * step);
  }
  for (; j < end; j += step) acc.add(at(j), j);
}

/// Accumulates rows [begin, end) of output o of a reduction by columns.
template <class Op, class R, class Ev>
FUSOR_INLINE accumulator<Op, R, typename Ev::value_type> reduce_rows(const Ev& ev, index_t o, index_t begin,
                                                                    index_t end) {
  auto acc = accumulator<Op, R, typename Ev::value_type>::identity();
  accumulate_along(acc, along_columns<Ev>{ev, o}, begin, end, index_t{1});
  return acc;
}

/// Accumulates the elements j = begin, begin + step, ... of output o.
template <class Op, class R, class Ev>
FUSOR_INLINE accumulator<Op, R, typename Ev::value_type> reduce_share(const Ev& ev, const red_space& s, index_t o,
                                                                     index_t begin, index_t step) {
  auto acc = accumulator<Op, R, typename Ev::value_type>::identity();
  if (s.red_rank == 1 && s.kept_rank <= 1 && s.rank == s.red_rank + s.kept_rank) {
    // One reduced axis and at most one kept one (what collapsing leaves of a
    // full sum, a row sum or a column sum): the coordinates are j and o
    // themselves. The general path's 64-bit divisions per element made a full
    // sum on an H200 compute-bound (27 % of cub::DeviceReduce's bandwidth).
    if (s.rank == 1) accumulate_along(acc, whole_axis<Ev>{ev}, begin, s.nred, step);
    else if (s.red_axis[0] == 1) accumulate_along(acc, along_rows<Ev>{ev, o}, begin, s.nred, step);
    else accumulate_along(acc, along_columns<Ev>{ev, o}, begin, s.nred, step);
    return acc;
  }
  index_t idx[max_rank];
  for (index_t j = begin; j < s.nred; j += step) {
    coordinates(s, o, j, idx);
    acc.add(ev.strided(idx, s.rank), j);
  }
  return acc;
}

/// The value an output takes from its accumulator (mean divides; arg
/// reductions give the position).
template <class Op, class R, class V>
FUSOR_INLINE auto finish(const accumulator<Op, R, V>& a, index_t nred) {
  if constexpr (accumulator<Op, R, V>::is_arg) return static_cast<std::int64_t>(a.index);
  else if constexpr (std::is_same_v<Op, red::mean>) return static_cast<R>(a.value / static_cast<R>(nred));
  else if constexpr (std::is_same_v<Op, red::nanmean>) return static_cast<R>(a.value / a.count);
  else return a.value;
}

/// Lays out a reduction of an evaluator filled against the operand's shape
/// `in`: reduced axes (bit d of `mask`) and kept ones. Axes are collapsed
/// where every leaf allows it, except for arg reductions, whose positions
/// count in the operand's own axes.
template <class Ev>
red_space layout_reduction(const dims& in, std::uint32_t mask, Ev& ev, bool keep_axes) {
  red_space s;
  s.nout = 1;
  s.nred = 1;
  dims shape = in;
  std::array<index_t, max_rank> acc{};
  {
    dims keep;
    for (std::size_t d = 0; d < in.rank(); ++d) keep.push_back(((mask >> d) & 1u) ? 1 : in[d]);
    acc = c_strides(keep);
    for (std::size_t d = 0; d < in.rank(); ++d)
      if ((mask >> d) & 1u) acc[d] = 0;
  }
  if (!keep_axes && in.elements() != 0) {
    constexpr std::size_t k = Ev::leaves + 1;
    std::array<std::array<index_t, max_rank>, k> strides{};
    std::array<std::array<index_t, max_rank>*, k> arrays{};
    strides[0] = acc;
    std::size_t j = 1;
    for_each_leaf(ev, [&](auto& l) {
      for (std::size_t d = 0; d < max_rank; ++d) strides[j][d] = l.strides[d];
      ++j;
    });
    for (std::size_t a = 0; a < k; ++a) arrays[a] = &strides[a];
    // An axis of extent 1 is dropped by collapsing; its kept/reduced kind
    // then does not matter.
    const loop_space ls = collapse(in, arrays);
    j = 1;
    for_each_leaf(ev, [&](auto& l) {
      for (std::size_t d = 0; d < max_rank; ++d) l.strides[d] = d < ls.rank ? strides[j][d] : 0;
      ++j;
    });
    shape = dims{};
    for (std::size_t d = 0; d < ls.rank; ++d) shape.push_back(ls.extent[d]);
    acc = strides[0];
    mask = 0;
    for (std::size_t d = 0; d < ls.rank; ++d)
      if (acc[d] == 0 && shape[d] != 1) mask |= 1u << d;
  }
  s.rank = static_cast<int>(shape.rank());
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    s.extent[d] = static_cast<index_t>(shape[d]);
    if ((mask >> d) & 1u) {
      s.red_axis[s.red_rank++] = static_cast<int>(d);
      s.nred *= s.extent[d];
    } else {
      s.kept_axis[s.kept_rank++] = static_cast<int>(d);
      s.nout *= s.extent[d];
    }
  }
  if (in.elements() == 0) s.nred = 0;
  s.by_columns = by_columns(s, ev);
  return s;
}

}  // namespace fusor::gpu
