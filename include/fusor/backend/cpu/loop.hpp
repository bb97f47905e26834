// fusor/backend/cpu/loop.hpp — the fused loops. One pass over memory per
// output: axes that every operand traverses contiguously are merged, the outer
// axes are walked with an odometer, and the innermost run is vectorised with
// xsimd when every operand is contiguous (stride 1) or broadcast (stride 0)
// along it. Aligned loads are used when every pointer allows them (fusor's own
// storage is 64-byte aligned), unaligned ones otherwise (borrowed buffers).
// Nothing here allocates.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/backend/cpu/evaluator.hpp"
#include "fusor/backend/cpu/simd.hpp"
#include "fusor/core/collapse.hpp"
#include "fusor/core/config.hpp"

namespace fusor::cpu {

/// The array leaves of one or more evaluators, in the order of their walk
/// (for_each_leaf): what the loops' set-up reads and writes. Gathered once
/// per plan into the prepared step that owns the evaluators (the pointers
/// are into them), so the set-up below is ordinary code, compiled once.
using leaf_table = std::vector<leaf_view*>;

namespace detail {
/// The visitor of collect_leaves (a class, not a lambda: a lambda's type is
/// named by the function it is written in, and so by the whole evaluator
/// type, in every node's for_each_leaf instance).
struct append_leaf {
  leaf_table& to;
  void operator()(leaf_view& l) const { to.push_back(&l); }
};
}  // namespace detail

/// Appends the array leaves of `ev` to `t` (a closed gate's leaves are none).
template <class Ev>
void collect_leaves(Ev& ev, leaf_table& t) {
  ev.for_each_leaf(detail::append_leaf{t});
}
/// The array leaves of `ev`.
template <class Ev>
leaf_table leaves_of(Ev& ev) {
  leaf_table t;
  t.reserve(Ev::leaves);
  collect_leaves(ev, t);
  return t;
}

/// Right-aligns every leaf's view on `out`: axes it lacks or has as 1 get
/// stride 0.
FUSOR_RUNTIME void broadcast_leaves(const leaf_table& t, const dims& out) noexcept;
/// Merges the axes of `shape` for the destination strides `dest` and every
/// leaf of `t`, then sets each leaf's innermost stride: the set-up of every
/// fused loop (elementwise, multi-output, reduction).
FUSOR_RUNTIME loop_space prepare_loop(const dims& shape, std::array<index_t, max_rank>& dest, const leaf_table& t);
/// Sets each leaf's stride along the row: strides[rank - 1].
FUSOR_RUNTIME void set_inner_strides(const leaf_table& t, std::size_t rank) noexcept;
/// Whether every leaf steps by zero or one element along the row.
FUSOR_RUNTIME bool leaves_vectorisable(const leaf_table& t) noexcept;
/// Whether every leaf steps by one element along the row (none broadcast).
FUSOR_RUNTIME bool leaves_dense(const leaf_table& t) noexcept;

/// Whether the rows of `s` are shorter than a batch of `w` elements with an
/// axis of at least a batch outside them: the loop is then better run along
/// that axis, vectorised, with the two exchanged (elementwise_loop,
/// reduce_loop).
inline bool short_rows(const loop_space& s, std::size_t w) noexcept {
  const std::size_t r = s.rank;
  return r >= 2 && s.extent[r - 1] < w && s.extent[r - 2] >= w;
}
/// Whether the two exchanged axes, written `bytes` per element, stay in the
/// per-core cache: a loop along the outer axis passes over them once per
/// element of the short row, so a block much larger than the cache would be
/// read from memory that many times (a (10^7, 10) array), where the rows in
/// their own order read it once.
inline bool short_rows_cached(const loop_space& s, std::size_t bytes) noexcept {
  const std::size_t r = s.rank;
  return s.extent[r - 1] * s.extent[r - 2] * bytes <= 128 * 1024;
}

/// Exchanges the last two axes of the loop space `s`, of the destination's
/// strides `dest` and of every leaf of `t` (short rows run along the axis
/// outside them).
FUSOR_RUNTIME void exchange_inner_axes(loop_space& s, std::array<index_t, max_rank>& dest,
                                       const leaf_table& t) noexcept;

/// What a vector loop over an evaluator needs to know of it and of the
/// element type it writes, as values: the set-up that reads them is compiled
/// once, not once per evaluator (and the batch width is the unit's, whose
/// instruction set may differ from the library's).
struct vector_traits {
  bool batches = false;    ///< the evaluator has a batch form of the written type
  bool exchange = false;   ///< short rows gain from being exchanged (batch_per_scalar_v)
  bool streams = false;    ///< the written type has non-temporal stores (can_stream)
  std::size_t width = 1;   ///< elements per batch
  std::size_t bytes = 0;   ///< bytes per element
};

namespace detail {
/// Elements [from, to) of the row, written from out[0]: the whole row
/// (from 0), or a chunk of an exchanged one (elementwise_loop::run_row).
template <class Mode, class E, class Ev>
void vector_row(E* out, const Ev& ev, std::size_t from, std::size_t to) {
  constexpr std::size_t w = batch<E>::size;
  std::size_t i = from;
  for (; i + w <= to; i += w) ev.template load<Mode>(static_cast<index_t>(i)).store(out + (i - from), xsimd_mode_t<Mode>{});
  for (; i < to; ++i) out[i - from] = ev.scalar(static_cast<index_t>(i));
}
/// `n` contiguous elements written `step` apart. It does not depend on the
/// kernel: one instance per element type.
template <class E>
void scatter(E* out, const E* from, std::size_t n, index_t step) noexcept {
  for (std::size_t k = 0; k < n; ++k) out[static_cast<index_t>(k) * step] = from[k];
}
/// The scalar loop for an output that no operand reads and that is contiguous:
/// `__restrict` lets GCC vectorise what it can of an evaluator xsimd cannot
/// (integer index arithmetic, a random draw's Philox rounds).
template <class E, class Ev>
void scalar_row_disjoint(E* __restrict out, const Ev& ev, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<E>(ev.scalar(static_cast<index_t>(i)));
}

/// The same, for an output that no operand reads: a vector store then cannot
/// change the evaluator's pointers, so GCC keeps them in registers instead of
/// reloading them after every store (xsimd's stores may alias anything).
template <class Mode, class E, class Ev>
void vector_row_disjoint(E* __restrict out, const Ev& ev, std::size_t n) {
  constexpr std::size_t w = batch<E>::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w) ev.template load<Mode>(static_cast<index_t>(i)).store(out + i, xsimd_mode_t<Mode>{});
  for (; i < n; ++i) out[i] = ev.scalar(static_cast<index_t>(i));
}
}  // namespace detail

/// What an elementwise loop decides once per plan, whatever it computes:
/// the merged iteration space, the output's strides, and which row loop runs.
struct elementwise_layout {
  loop_space space;
  std::array<index_t, max_rank> out_strides{};
  std::size_t n = 0;
  index_t out_inner = 1;  ///< the output's stride along the row (1 but for an update of a strided view)
  bool empty = true;
  bool vectorise = false;
  bool dense_rows = false;  ///< vectorised, and no leaf broadcast along the row
  bool stream = false;
  bool disjoint = false;  ///< no operand reads the output's memory
  /// Rows shorter than a batch, with an axis of at least a batch outside
  /// them (a softmax's gradient over ten classes, for 64 samples): the two
  /// axes are exchanged, so the loop runs along the longer one, vectorised,
  /// and stores each batch lane by lane, `out_inner` (the short row's
  /// length) apart. A leaf that now steps by neither 0 nor 1 element is read
  /// lane by lane (leaf::load). Only for a tree whose scalar form computes
  /// batches (batch_per_scalar_v: exp, log, tanh...): there it is 3-4x
  /// faster than the short rows' scalar loop, where plain arithmetic, read
  /// and written lane by lane, was up to 2.5x slower. The reductions
  /// exchange short rows too (reduce.hpp).
  bool exchanged = false;
};

/// Prepares `l` for the leaves `t` of an evaluator with traits `k` over
/// `shape` (the leaves are broadcast to it here). `streamable`: the output
/// is not read by this loop nor soon after it (an output or an update, not a
/// temporary), so when it is larger than the last-level cache it is written
/// with non-temporal stores — no write-allocate reads, no eviction of the
/// operands. `out`: the output's element strides when it is a view (an
/// update of part of a variable); null: contiguous, row-major. `disjoint`: no
/// operand reads the output's buffer (it is not written in place), so the
/// row loop may assume its stores alias nothing it reads.
FUSOR_RUNTIME void prepare_elementwise(elementwise_layout& l, const leaf_table& t, const vector_traits& k,
                                       const dims& shape, bool streamable, const std::array<index_t, max_rank>* out,
                                       bool disjoint);

/// The traits of an evaluator Ev writing elements of E (vector_traits).
template <class E, class Ev>
constexpr vector_traits vector_traits_of() {
  constexpr bool batches = Ev::simd && std::is_same_v<typename Ev::value_type, E>;
  return {batches, batches && batch_per_scalar_v<Ev>, can_stream<E>, batches ? batch<E>::size : 1, sizeof(E)};
}

/// out[i] = ev(i) over a shape, out contiguous row-major, split into what
/// depends only on the shapes (prepare: merge axes, set strides, decide
/// vectorisation — once per plan, elementwise_layout) and the loop itself
/// (run — every call, after the leaves' data pointers are bound).
template <class E, class Ev>
struct elementwise_loop : elementwise_layout {
  // Set up by prepare_elementwise (through prepare_group, kernels.hpp).
  void run(E* out, Ev& ev) const {
    if (empty) return;
    if (space.rank == 1) {  // one contiguous run: no odometer (small arrays pay for every instruction)
      ev.set_outer(nullptr, 0);
      run_row(out, ev);
    } else {
      for_each_row(space, [&](const index_t* idx, std::size_t outer) {
        E* row = out;
        for (std::size_t d = 0; d < outer; ++d) row += idx[d] * out_strides[d];
        ev.set_outer(idx, outer);
        run_row(row, ev);
      });
    }
    if (stream) stream_fence();
  }

 private:
  void run_row(E* row, Ev& ev) const {
    if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, E>) {
      if (vectorise) {
        if constexpr (can_stream<E>) {
          if (stream) {
            stream_row(row, ev);
            return;
          }
        }
        // Two variants, chosen once per plan (dense_rows): no leaf broadcast
        // (no per-load test of a stride), and the general one. Not a third
        // for rows that all start on a batch boundary: an aligned load or
        // store is no faster than an unaligned one at an aligned address on
        // the CPUs xsimd targets (W1-W3 within their noise without it), and
        // each variant is another inlined copy of the whole fused tree in
        // every kernel.
        if constexpr (batch_per_scalar_v<Ev>) {
          if (exchanged) {
            exchanged_row(row, ev);
            return;
          }
        }
        if (dense_rows) {
          if (disjoint) detail::vector_row_disjoint<dense<xsimd::unaligned_mode>>(row, ev, n);
          else detail::vector_row<dense<xsimd::unaligned_mode>>(row, ev, 0, n);
        } else {
          detail::vector_row<xsimd::unaligned_mode>(row, ev, 0, n);
        }
        return;
      }
    }
    if (disjoint && out_inner == 1) {
      detail::scalar_row_disjoint(row, ev, n);
      return;
    }
    for (std::size_t i = 0; i < n; ++i)
      row[static_cast<index_t>(i) * out_inner] = static_cast<E>(ev.scalar(static_cast<index_t>(i)));
  }

  /// A row along the exchanged axis: computed a chunk at a time into a
  /// buffer by the general row, then stored `out_inner` apart. (Its own
  /// function: the buffer stays out of run_row's frame, which every short
  /// row of every other loop enters.)
  void exchanged_row(E* row, Ev& ev) const {
    constexpr std::size_t chunk = 256;
    alignas(64) E lanes[chunk];
    for (std::size_t from = 0; from < n; from += chunk) {
      const std::size_t to = std::min(n, from + chunk);
      detail::vector_row<xsimd::unaligned_mode>(lanes, ev, from, to);
      detail::scatter(row + static_cast<index_t>(from) * out_inner, lanes, to - from, out_inner);
    }
  }

  /// Scalar elements up to the first aligned batch, then streaming stores.
  /// One loop, in the general load mode: a row this long is bound by memory,
  /// so the dense mode's saving (no per-load test of a leaf's stride) is not
  /// measurable here, and a second loop would be another inlined copy of the
  /// fused tree in every kernel.
  void stream_row(E* row, Ev& ev) const {
    constexpr std::size_t w = batch<E>::size;
    std::size_t i = 0;
    while (i < n && !is_batch_aligned(row + i)) {
      row[i] = ev.scalar(static_cast<index_t>(i));
      ++i;
    }
    for (; i + w <= n; i += w) store_stream(row + i, ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i)));
    for (; i < n; ++i) row[i] = ev.scalar(static_cast<index_t>(i));
  }
};

/// Several outputs of one shape in one pass (ArrayFire's evalMultiple, CUB's
/// multi-output transform): the iteration space is walked once, in chunks that
/// stay in L1, and every output is computed from the same chunk of its
/// operands. Prepared once per plan like elementwise_loop.
template <class... Evs>
struct multi_loop {
  loop_space space;
  std::array<index_t, max_rank> out_strides{};
  std::size_t n = 0;
  bool empty = true;
  std::array<bool, sizeof...(Evs) + 1> vectorise{};

  /// `each`: the leaves of each evaluator, in order (broadcast to `shape` here).
  void prepare(const dims& shape, const leaf_table* each) {
    empty = shape.elements() == 0;
    if (empty) return;
    leaf_table all;
    for (std::size_t k = 0; k < sizeof...(Evs); ++k) {
      broadcast_leaves(each[k], shape);
      all.insert(all.end(), each[k].begin(), each[k].end());
    }
    out_strides = c_strides(shape);
    space = prepare_loop(shape, out_strides, all);
    n = space.extent[space.rank - 1];
    for (std::size_t k = 0; k < sizeof...(Evs); ++k) vectorise[k] = leaves_vectorisable(each[k]);
  }

  /// `outs` are the destinations, one per evaluator, in order.
  template <class... E>
  void run(std::tuple<E*...> outs, Evs&... evs) const {
    if (empty) return;
    constexpr std::size_t chunk = 2048;
    for_each_row(space, [&](const index_t* idx, std::size_t outer) {
      std::size_t offset = 0;
      for (std::size_t d = 0; d < outer; ++d) offset += static_cast<std::size_t>(idx[d] * out_strides[d]);
      (evs.set_outer(idx, outer), ...);
      for (std::size_t begin = 0; begin < n; begin += chunk) {
        const std::size_t end = begin + chunk < n ? begin + chunk : n;
        [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
          (one(std::get<K>(outs) + offset, evs, begin, end, vectorise[K]), ...);
        }(std::index_sequence_for<E...>{});
      }
    });
  }

 private:
  template <class E, class Ev>
  static void one(E* row, Ev& ev, std::size_t begin, std::size_t end, bool vector) {
    std::size_t i = begin;
    if constexpr (Ev::simd && std::is_same_v<typename Ev::value_type, E>) {
      if (vector) {
        constexpr std::size_t w = batch<E>::size;
        for (; i + w <= end; i += w)
          ev.template load<xsimd::unaligned_mode>(static_cast<index_t>(i)).store_unaligned(row + i);
      }
    }
    for (; i < end; ++i) row[i] = static_cast<E>(ev.scalar(static_cast<index_t>(i)));
  }
};

}  // namespace fusor::cpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/cpu/impl/loop.ipp"
#endif
