// fusor/backend/cpu/reduce.hpp — reductions fused with their producer: the
// operand's evaluator is read once, element by element, straight into the
// accumulators; the operand is never materialised.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "fusor/backend/cpu/loop.hpp"
#include "fusor/expr/reduction.hpp"

namespace fusor::cpu {

namespace detail {
/// Whether a reduction into accumulators of type R reads `Ev` a batch at a
/// time: the evaluator has a batch form, R has batches, and the elements
/// enter the accumulator without a conversion.
template <class Ev, class R>
inline constexpr bool batch_reducible_v = Ev::simd && simd_element<R> && std::is_same_v<typename Ev::value_type, R>;

/// Element i of the current row, entering an accumulator of type R.
template <class Op, class R, class Ev>
inline R element_at(const Ev& ev, std::size_t i) {
  return Op::element(static_cast<R>(ev.scalar(static_cast<index_t>(i))));
}

/// `Mode`: dense<unaligned_mode> when no leaf is broadcast along the row (no
/// per-load test of the stride), else unaligned_mode.
template <class Op, class R, class Mode, class Ev>
R reduce_row(const Ev& ev, std::size_t n) {
  R acc = Op::template identity<R>();
  std::size_t i = 0;
  if constexpr (batch_reducible_v<Ev, R>) {
    constexpr std::size_t w = batch<R>::size;
    if (n >= 4 * w) {
      // Four independent accumulators hide the add latency.
      batch<R> a0(acc), a1(acc), a2(acc), a3(acc);
      for (; i + 4 * w <= n; i += 4 * w) {
        a0 = Op::combine(a0, Op::element(ev.template load<Mode>(static_cast<index_t>(i))));
        a1 = Op::combine(a1, Op::element(ev.template load<Mode>(static_cast<index_t>(i + w))));
        a2 = Op::combine(a2, Op::element(ev.template load<Mode>(static_cast<index_t>(i + 2 * w))));
        a3 = Op::combine(a3, Op::element(ev.template load<Mode>(static_cast<index_t>(i + 3 * w))));
      }
      acc = horizontal<Op>(Op::combine(Op::combine(a0, a1), Op::combine(a2, a3)));
    }
    for (; i + w <= n; i += w)
      acc = Op::combine(acc, horizontal<Op>(Op::element(ev.template load<Mode>(static_cast<index_t>(i)))));
  }
  for (; i < n; ++i) acc = Op::combine(acc, element_at<Op, R>(ev, i));
  return acc;
}

/// Accumulates a row of `ev` into the row `out` of the kept axis.
template <class Op, class R, class Mode, class Ev>
void accumulate_row(R* out, const Ev& ev, std::size_t n) {
  std::size_t i = 0;
  if constexpr (batch_reducible_v<Ev, R>) {
    constexpr std::size_t w = batch<R>::size;
    for (; i + w <= n; i += w) {
      const auto v = Op::element(ev.template load<Mode>(static_cast<index_t>(i)));
      Op::combine(batch<R>::load_unaligned(out + i), v).store_unaligned(out + i);
    }
  }
  for (; i < n; ++i) out[i] = Op::combine(out[i], element_at<Op, R>(ev, i));
}

/// Combines a row of `ev` into the row `out`, whose elements are `step` apart
/// (the short rows' axes exchanged, run_rows): the values are computed a
/// batch at a time and combined into `out` lane by lane.
template <class Op, class R, class Mode, class Ev>
void accumulate_row_strided(R* out, const Ev& ev, std::size_t n, index_t step) {
  constexpr std::size_t w = batch<R>::size;
  const auto at = [step](std::size_t i) { return static_cast<std::size_t>(static_cast<index_t>(i) * step); };
  std::size_t i = 0;
  for (; i + w <= n; i += w) {
    alignas(batch<R>::arch_type::alignment()) R lane[w];
    Op::element(ev.template load<Mode>(static_cast<index_t>(i))).store_aligned(lane);
    for (std::size_t k = 0; k < w; ++k) out[at(i + k)] = Op::combine(out[at(i + k)], lane[k]);
  }
  for (; i < n; ++i) out[at(i)] = Op::combine(out[at(i)], element_at<Op, R>(ev, i));
}

/// K batches of the row from element i, rows r0..r1 of the axis just outside
/// it (idx[outer - 1]) accumulated in registers, then combined into `out`.
/// The batches are a loop the compiler unrolls when it optimises (FUSOR_UNROLL_8:
/// K accumulators in registers, as written out by hand); unoptimised, as the
/// sanitizer and debug builds compile it, it is one load of the evaluator
/// instead of K inlined copies of the whole fused tree.
template <class Op, class R, class Mode, std::size_t K, class Ev>
void accumulate_block(R* out, Ev& ev, index_t* idx, std::size_t outer, index_t r0, index_t r1, std::size_t i) {
  constexpr std::size_t w = batch<R>::size;
  std::array<batch<R>, K> acc;
FUSOR_UNROLL_8
  for (std::size_t k = 0; k < K; ++k) acc[k] = batch<R>(Op::template identity<R>());
  for (index_t r = r0; r < r1; ++r) {
    idx[outer - 1] = r;
    ev.set_outer(idx, outer);
FUSOR_UNROLL_8
    for (std::size_t k = 0; k < K; ++k)
      acc[k] = Op::combine(acc[k], Op::element(ev.template load<Mode>(static_cast<index_t>(i + k * w))));
  }
FUSOR_UNROLL_8
  for (std::size_t k = 0; k < K; ++k)
    Op::combine(batch<R>::load_unaligned(out + i + k * w), acc[k]).store_unaligned(out + i + k * w);
}

/// Rows r0..r1 of the axis just outside the row (idx[outer - 1]), all
/// accumulated into the one row `out`: the accumulators stay in registers
/// across the rows, a block of K batches of the row at a time, and `out` is
/// read and written once per block instead of once per row. (Accumulating
/// row after row reloads each batch of `out` just stored: a store-to-load
/// round trip per batch and row, about twice the time of the loads.)
/// Eight batches per block, four where the tree computes a transcendental
/// function (batch_per_scalar_v: exp, log, tanh...): each batch is then tens
/// of instructions, four independent ones keep the core as busy as eight
/// (the same speed or up to 6 % faster; two were 16-26 % slower on
/// `sum(exp(x), 0)`), and the block's code, the fused tree inlined once per
/// batch, is half as long.
template <class Op, class R, class Mode, class Ev>
void accumulate_rows(R* out, Ev& ev, index_t* idx, std::size_t outer, index_t r0, index_t r1, std::size_t n) {
  constexpr std::size_t w = batch<R>::size, K = batch_per_scalar_v<Ev> ? 4 : 8;
  std::size_t i = 0;
  for (; i + K * w <= n; i += K * w) accumulate_block<Op, R, Mode, K>(out, ev, idx, outer, r0, r1, i);
  for (; i + w <= n; i += w) accumulate_block<Op, R, Mode, 1>(out, ev, idx, outer, r0, r1, i);
  if (i < n)
    for (index_t r = r0; r < r1; ++r) {
      idx[outer - 1] = r;
      ev.set_outer(idx, outer);
      for (std::size_t j = i; j < n; ++j) out[j] = Op::combine(out[j], element_at<Op, R>(ev, j));
    }
}
}  // namespace detail

/// How many operand elements each output of a reduction to `keep` (the
/// operand's rank, the reduced axes of length 1) reads.
inline std::size_t reduced_elements(const dims& keep, const dims& in) {
  if (keep.rank() != in.rank()) return in.elements();
  std::size_t n = 1;
  for (std::size_t d = 0; d < in.rank(); ++d)
    if (keep[d] == 1) n *= in[d];
  return n;
}

/// What a reduction decides once per plan, whatever it computes: the
/// merged iteration space, where each element's accumulator is, and which
/// loop runs (prepare_reduction).
struct reduce_layout {
  dims keep, in;
  loop_space space;
  std::array<index_t, max_rank> acc{};
  std::size_t n = 0, nout = 0;
  index_t acc_inner = 0;
  bool vectorise = false;
  bool leaves_dense = false;  ///< vectorised, and no leaf broadcast along the row
  /// The kept axis is the row and the axis outside it is reduced (a bias's
  /// gradient, `sum(X, 0)`): rows are accumulated in blocks (run_blocks).
  bool by_blocks = false;
  /// The short rows' axes exchanged: leaves may step by any stride along the
  /// row (read lane by lane in the unaligned mode).
  bool strided_rows = false;
};

/// Prepares `l` to reduce an operand of shape `in`, whose leaves are `t`
/// (broadcast to `in` here), into `keep`: `in` with the reduced axes set to
/// 1. `batches`: the operand is read a batch of `width` elements at a time
/// straight into the accumulators (batch_reducible_v), whose elements are
/// `bytes` long.
FUSOR_RUNTIME void prepare_reduction(reduce_layout& l, const leaf_table& t, const dims& keep, const dims& in,
                                     bool batches, std::size_t width, std::size_t bytes);

/// Reduces `ev` (shape `in`) into `out`, whose shape `keep` is `in` with the
/// reduced axes set to 1: what depends only on the shapes is prepared once
/// per plan (prepare, reduce_layout), the loop runs every call (run, after
/// the leaves' data pointers are bound). `what` names the reduction in error
/// messages.
template <class Op, class R, class Ev>
struct reduce_loop : reduce_layout {
  using dense_mode = dense<xsimd::unaligned_mode>;
  /// The loops a mean runs are its sum's (the division comes after them): a
  /// unit that sums and averages the same operand compiles them once.
  using loop_op = std::conditional_t<std::is_same_v<Op, red::mean>, red::sum,
                                     std::conditional_t<std::is_same_v<Op, red::nanmean>, red::nansum, Op>>;

  /// `t`: the leaves of the evaluator the loop will run.
  void prepare(const dims& keep_shape, const dims& in_shape, const leaf_table& t) {
    constexpr bool batches = detail::batch_reducible_v<Ev, R>;
    prepare_reduction(*this, t, keep_shape, in_shape, batches, batches ? batch<R>::size : 1, sizeof(R));
  }

  /// The zero-size case: an error (max, min) when the reduced axes are
  /// empty, whatever the output's size (NumPy's rule); else NaN (means) or
  /// the identity.
  bool empty(R* out, const std::string& what) const {
    if (in.elements() != 0) return false;
    if constexpr (Op::needs_elements) {
      if (reduced_elements(keep, in) == 0)
        throw value_error(what + ": zero-size reduction has no identity (shape " + in.str() + ")");
    }
    if constexpr (std::is_same_v<Op, red::mean> || std::is_same_v<Op, red::nanmean>)
      std::fill(out, out + nout, std::numeric_limits<R>::quiet_NaN());
    else
      std::fill(out, out + nout, Op::template identity<R>());
    return true;
  }

  /// Accumulates into `out` (filled with the identity first); mean divides.
  void run(R* out, Ev& ev) const {
    std::fill(out, out + nout, Op::template identity<R>());
    if (in.elements() == 0) return;
    if (by_blocks) run_blocks(out, ev);
    else run_rows(out, ev);
    if constexpr (std::is_same_v<Op, red::mean>) {
      const R count = static_cast<R>(in.elements() / nout);
      for (std::size_t i = 0; i < nout; ++i) out[i] /= count;
    }
  }

 private:
  /// The axis outside the row is walked in blocks of rows whose data (about
  /// 16 KB of the operand's type) stay in the first-level cache while the
  /// row's batches are accumulated across them.
  void run_blocks(R* out, Ev& ev) const {
    if constexpr (detail::batch_reducible_v<Ev, R>) {
      loop_space rows_outside = space;
      const std::size_t across = rows_outside.extent[space.rank - 2];
      rows_outside.extent[space.rank - 2] = 1;
      const std::size_t block = std::max<std::size_t>(8, 16384 / (sizeof(R) * std::max<std::size_t>(n, 1)));
      for_each_row(rows_outside, [&](const index_t* at, std::size_t outer) {
        std::array<index_t, max_rank> idx{};
        std::copy(at, at + outer, idx.begin());
        R* row = out;
        for (std::size_t d = 0; d < outer; ++d) row += idx[d] * acc[d];
        for (std::size_t r0 = 0; r0 < across; r0 += block) {
          const auto r1 = static_cast<index_t>(std::min(across, r0 + block));
          if (leaves_dense)
            detail::accumulate_rows<loop_op, R, dense_mode>(row, ev, idx.data(), outer, static_cast<index_t>(r0), r1, n);
          else
            detail::accumulate_rows<loop_op, R, xsimd::unaligned_mode>(row, ev, idx.data(), outer,
                                                                  static_cast<index_t>(r0), r1, n);
        }
      });
    }
  }

  void run_rows(R* out, Ev& ev) const {
    for_each_row(space, [&](const index_t* idx, std::size_t outer) {
      R* row = out;
      for (std::size_t d = 0; d < outer; ++d) row += idx[d] * acc[d];
      ev.set_outer(idx, outer);
      if (acc_inner == 0) {
        R part;
        if (leaves_dense) {
          part = detail::reduce_row<loop_op, R, dense_mode>(ev, n);
        } else if (vectorise) {
          part = detail::reduce_row<loop_op, R, xsimd::unaligned_mode>(ev, n);
        } else {
          part = Op::template identity<R>();
          for (std::size_t i = 0; i < n; ++i) part = Op::combine(part, detail::element_at<Op, R>(ev, i));
        }
        *row = Op::combine(*row, part);
      } else if (strided_rows) {  // short rows exchanged, kept: the results acc_inner apart
        if constexpr (detail::batch_reducible_v<Ev, R>)
          detail::accumulate_row_strided<loop_op, R, xsimd::unaligned_mode>(row, ev, n, acc_inner);
      } else if (leaves_dense) {  // the kept axis is the row: acc_inner is 1
        detail::accumulate_row<loop_op, R, dense_mode>(row, ev, n);
      } else if (vectorise) {
        detail::accumulate_row<loop_op, R, xsimd::unaligned_mode>(row, ev, n);
      } else {
        for (std::size_t i = 0; i < n; ++i)
          row[i * static_cast<std::size_t>(acc_inner)] =
              Op::combine(row[i * static_cast<std::size_t>(acc_inner)], detail::element_at<Op, R>(ev, i));
      }
    });
  }
};

/// nanmean: nansum divided, per slice, by the count of numbers, counted in
/// double (exact up to 2^53 elements per slice, where a float32 count would
/// stop at 2^24) over a second prepared loop of the same operand.
template <class R, class Ev>
struct nanmean_loop {
  reduce_loop<red::nanmean, R, Ev> sums;
  reduce_loop<red::count_numbers, double, cast_eval<double, Ev>> counts;
  /// The operand converted for the count: a copy of the sum's evaluator
  /// with leaves of its own, made before prepare (the count's set-up may
  /// differ from the sum's).
  cast_eval<double, Ev> numbers;

  /// `t`: the leaves of the sum's evaluator; `numbers_t`: those of `numbers`.
  void prepare(const dims& keep, const dims& in, const leaf_table& t, const leaf_table& numbers_t) {
    sums.prepare(keep, in, t);
    counts.prepare(keep, in, numbers_t);
  }
  bool empty(R* out, const std::string& what) const { return sums.empty(out, what); }
  /// `scratch`: room for keep.elements() doubles. The leaves of both `ev`
  /// and `numbers` must be bound.
  void run(R* out, Ev& ev, double* scratch) {
    sums.run(out, ev);
    if (sums.in.elements() == 0) return;
    counts.run(scratch, numbers);
    for (std::size_t i = 0; i < sums.nout; ++i) out[i] = static_cast<R>(out[i] / scratch[i]);
  }
};

/// argmax / argmin: index along `axis` (or the flat index when axis < 0) of the
/// first best element. A scalar loop: arg-reductions are rarely the hot path.
/// `best` is scratch space for keep.elements() values (from the workspace, so
/// that a steady-state call allocates nothing).
/// `t`: the leaves of `ev`.
template <class Op, class Ev>
void arg_reduce_into(std::int64_t* out, typename Ev::value_type* best, const dims& keep, const dims& in, int axis,
                     Ev& ev, const leaf_table& t, const std::string& what) {
  using V = typename Ev::value_type;
  const std::size_t nout = keep.elements();
  if (in.elements() == 0) {
    // Nothing to write when only another axis is empty (argmax over axis 0
    // of a (17, 0) array is of shape (0,), as NumPy gives; found by the
    // differential tests); an error when the reduced axis is, whatever the
    // output's size (over axis 1 of a (0, 0) array, as NumPy).
    if (axis >= 0 && static_cast<std::size_t>(axis) < in.rank() && in[static_cast<std::size_t>(axis)] != 0) return;
    throw value_error(what + ": attempt to get " + Op::name + " of an empty sequence (shape " + in.str() + ")");
  }
  broadcast_leaves(t, in);
  const std::size_t r = in.rank() == 0 ? 1 : in.rank();
  dims space = in.rank() == 0 ? dims{1} : in;
  if (in.rank() == 0)  // a rank-0 operand read as one element of a rank-1 space
    for (leaf_view* l : t) l->strides[0] = 0;
  set_inner_strides(t, r);
  std::array<index_t, max_rank> kstride = c_strides(keep);
  for (std::size_t d = 0; d < keep.rank(); ++d)
    if (axis < 0 || static_cast<int>(d) == axis) kstride[d] = 0;
  std::fill(out, out + nout, std::int64_t{-1});  // -1: nothing seen yet
  loop_space s;
  s.rank = r;
  for (std::size_t d = 0; d < r; ++d) s.extent[d] = space[d];
  std::int64_t flat = 0;
  const std::size_t n = s.extent[r - 1];
  for_each_row(s, [&](const index_t* idx, std::size_t outer) {
    ev.set_outer(idx, outer);
    std::size_t base = 0;
    for (std::size_t d = 0; d < outer; ++d) base += static_cast<std::size_t>(idx[d] * kstride[d]);
    for (std::size_t i = 0; i < n; ++i, ++flat) {
      const std::size_t o = base + i * static_cast<std::size_t>(kstride[r - 1]);
      const V v = ev.scalar(static_cast<index_t>(i));
      const std::int64_t pos = axis < 0 ? flat : (static_cast<std::size_t>(axis) == r - 1 ? static_cast<std::int64_t>(i) : idx[axis]);
      if (out[o] < 0 || Op::better(v, best[o])) {
        best[o] = v;
        out[o] = pos;
      }
    }
  });
}

}  // namespace fusor::cpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/cpu/impl/reduce.ipp"
#endif
