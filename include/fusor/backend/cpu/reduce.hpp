// fusor/backend/cpu/reduce.hpp — reductions fused with their producer: the
// operand's evaluator is read once, element by element, straight into the
// accumulators; the operand is never materialised.
#pragma once

#include <algorithm>
#include <limits>
#include <string>

#include "fusor/backend/cpu/loop.hpp"
#include "fusor/expr/reduction.hpp"

namespace fusor::cpu {

namespace detail {
/// Element i of the current row, entering an accumulator of type R.
template <class Op, class R, class Ev>
FUSOR_INLINE R element_at(const Ev& ev, std::size_t i) {
  return Op::element(static_cast<R>(ev.scalar(static_cast<index_t>(i))));
}

template <class Op, class R, class Ev>
R reduce_row(const Ev& ev, std::size_t n) {
  R acc = Op::template identity<R>();
  std::size_t i = 0;
  if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, R>) {
    constexpr std::size_t w = batch<R>::size;
    if (n >= 4 * w) {
      // Four independent accumulators hide the add latency.
      batch<R> a0(acc), a1(acc), a2(acc), a3(acc);
      for (; i + 4 * w <= n; i += 4 * w) {
        a0 = Op::combine(a0, Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i))));
        a1 = Op::combine(a1, Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i + w))));
        a2 = Op::combine(a2, Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i + 2 * w))));
        a3 = Op::combine(a3, Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i + 3 * w))));
      }
      acc = horizontal<Op>(Op::combine(Op::combine(a0, a1), Op::combine(a2, a3)));
    }
    for (; i + w <= n; i += w)
      acc = Op::combine(
          acc, horizontal<Op>(Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i)))));
  }
  for (; i < n; ++i) acc = Op::combine(acc, element_at<Op, R>(ev, i));
  return acc;
}
}  // namespace detail

/// Reduces `ev` (shape `in`) into `out`, whose shape `keep` is `in` with the
/// reduced axes set to 1. `what` names the reduction in error messages.
/// nanmean needs `counts`, scratch space for keep.elements() doubles (from the
/// workspace, so that a steady-state call allocates nothing).
template <class Op, class R, class Ev>
void reduce_into(R* out, const dims& keep, const dims& in, Ev& ev, const std::string& what,
                 double* counts = nullptr) {
  constexpr bool is_mean = std::is_same_v<Op, red::mean> || std::is_same_v<Op, red::nanmean>;
  const std::size_t nout = keep.elements();
  std::fill(out, out + nout, Op::template identity<R>());
  if (in.elements() == 0) {
    if constexpr (Op::needs_elements) {
      if (nout != 0)
        throw value_error(what + ": zero-size reduction has no identity (shape " + in.str() + ")");
    }
    if constexpr (is_mean) std::fill(out, out + nout, std::numeric_limits<R>::quiet_NaN());
    return;
  }
  // nanmean counts the numbers of each slice in a second pass over the same
  // (unmodified) evaluator.
  [[maybe_unused]] const Ev unbroadcast = ev;
  ev.broadcast_to(in);
  std::array<index_t, max_rank> acc = c_strides(keep);
  for (std::size_t d = 0; d < in.rank(); ++d)
    if (keep[d] == 1) acc[d] = 0;
  const loop_space s = prepare_loop(in, acc, ev);
  const std::size_t n = s.extent[s.rank - 1];
  const index_t acc_inner = acc[s.rank - 1];
  const bool vectorise = detail::leaves_vectorisable(ev);

  for_each_row(s, [&](const index_t* idx, std::size_t outer) {
    R* row = out;
    for (std::size_t d = 0; d < outer; ++d) row += idx[d] * acc[d];
    ev.set_outer(idx, outer);
    if (acc_inner == 0) {
      R part;
      if (vectorise) {
        part = detail::reduce_row<Op, R>(ev, n);
      } else {
        part = Op::template identity<R>();
        for (std::size_t i = 0; i < n; ++i) part = Op::combine(part, detail::element_at<Op, R>(ev, i));
      }
      *row = Op::combine(*row, part);
    } else {
      std::size_t i = 0;
      if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, R>) {
        if (vectorise) {
          constexpr std::size_t w = batch<R>::size;
          for (; i + w <= n; i += w) {
            const auto v = Op::element(ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i)));
            Op::combine(batch<R>::load_unaligned(row + i), v).store_unaligned(row + i);
          }
        }
      }
      for (; i < n; ++i)
        row[i * static_cast<std::size_t>(acc_inner)] =
            Op::combine(row[i * static_cast<std::size_t>(acc_inner)], detail::element_at<Op, R>(ev, i));
    }
  });
  if constexpr (std::is_same_v<Op, red::mean>) {
    const R count = static_cast<R>(in.elements() / nout);
    for (std::size_t i = 0; i < nout; ++i) out[i] /= count;
  } else if constexpr (std::is_same_v<Op, red::nanmean>) {
    // Counted in double: exact up to 2^53 elements per slice, where a float32
    // count would stop at 2^24.
    cast_eval<double, Ev> numbers{unbroadcast};
    reduce_into<red::count_numbers, double>(counts, keep, in, numbers, what);
    for (std::size_t i = 0; i < nout; ++i) out[i] = static_cast<R>(out[i] / counts[i]);
  }
}

/// argmax / argmin: index along `axis` (or the flat index when axis < 0) of the
/// first best element. A scalar loop: arg-reductions are rarely the hot path.
/// `best` is scratch space for keep.elements() values (from the workspace, so
/// that a steady-state call allocates nothing).
template <class Op, class Ev>
void arg_reduce_into(std::int64_t* out, typename Ev::value_type* best, const dims& keep, const dims& in, int axis,
                     Ev& ev, const std::string& what) {
  using V = typename Ev::value_type;
  const std::size_t nout = keep.elements();
  if (in.elements() == 0) {
    throw value_error(what + ": attempt to get " + Op::name + " of an empty sequence (shape " + in.str() + ")");
  }
  ev.broadcast_to(in);
  const std::size_t r = in.rank() == 0 ? 1 : in.rank();
  dims space = in.rank() == 0 ? dims{1} : in;
  ev.for_each_leaf([&](auto& l) {
    if (in.rank() == 0) l.strides[0] = 0;
    l.inner = l.strides[r - 1];
  });
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
