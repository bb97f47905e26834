// fusor/backend/cuda/reduce.hpp — reductions as device kernels see them: the
// geometry of a reduction (which axes are kept, which reduced) and the
// reduction of one output's elements, written once, FUSOR_HD, for the CUDA
// kernels (each thread a share of the elements, then a block reduction of the
// partials) and the emulated device (one share: all of them, in order).
// The operand is read through its evaluator: never materialised. Portable.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "fusor/backend/cuda/evaluator.hpp"
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
};

/// How many blocks share one output's elements: enough blocks to fill a
/// device of `processors` multiprocessors when there are few outputs, none
/// with fewer than a few thousand elements.
inline index_t reduction_chunks(index_t nout, index_t nred, int processors) {
  if (nout <= 0 || nred <= 0) return 1;
  const index_t blocks_wanted = 4 * static_cast<index_t>(processors);
  if (nout >= blocks_wanted) return 1;
  const index_t by_size = (nred + 8191) / 8192;
  const index_t by_device = (blocks_wanted + nout - 1) / nout;
  index_t c = by_size < by_device ? by_size : by_device;
  return c < 1 ? 1 : (c > 1024 ? 1024 : c);
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

/// Accumulates the elements j = begin, begin + step, ... of output o.
template <class Op, class R, class Ev>
FUSOR_INLINE accumulator<Op, R, typename Ev::value_type> reduce_share(const Ev& ev, const red_space& s, index_t o,
                                                                     index_t begin, index_t step) {
  auto acc = accumulator<Op, R, typename Ev::value_type>::identity();
  index_t idx[max_rank];
  if (s.red_rank == 1 && s.kept_rank <= 1 && s.rank == s.red_rank + s.kept_rank) {
    // One reduced axis and at most one kept one (what collapsing leaves of a
    // full sum or a row sum): the coordinates are j and o themselves. The
    // general path's 64-bit divisions per element made a full sum on an H200
    // compute-bound (27 % of cub::DeviceReduce's bandwidth).
    if (s.kept_rank == 1) idx[s.kept_axis[0]] = o;
    const int d = s.red_axis[0];
    for (index_t j = begin; j < s.nred; j += step) {
      idx[d] = j;
      acc.add(ev.strided(idx, s.rank), j);
    }
    return acc;
  }
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
  return s;
}

}  // namespace fusor::gpu
