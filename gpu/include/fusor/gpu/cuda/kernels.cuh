// fusor/gpu/cuda/kernels.cuh — fusor's CUDA kernels and their launchers: what only
// nvcc compiles. A g++ unit never includes this (it sees the launchers only as
// function pointers in the registry of backend/gpu/launch.hpp).
//
// Elementwise groups:
//   - every leaf contiguous (stride 1 along the one merged axis): CUB's
//     DeviceTransform on raw pointers, with the evaluator as a value functor —
//     CUB picks its best kernel for the architecture (bulk copies into shared
//     memory on sm_90 and later);
//   - otherwise (broadcast, strided, permuted reads): fusor's own grid-stride
//     kernel, several items per thread, 32-bit indices when the size allows.
// Reductions: one output per block, its elements shared by the block's
// threads and merged with cub::BlockReduce; when there are few outputs, each
// output's elements are split between several blocks (partial accumulators,
// then a merge), so that a full reduction fills the device. A reduction of
// the outer axis that keeps a contiguous inner one (sum(X, 0)) goes by
// columns instead: one output per thread, its rows split between blocks; and
// many outputs of few elements each (sum(X, 1)) a warp each.
#pragma once

#if !defined(__CUDACC__)
#error "fusor/gpu/cuda/kernels.cuh is CUDA code: compile this unit with nvcc (g++ units link the launchers instead)"
#endif

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include "fusor/backend/gpu/launch.hpp"

namespace fusor::gpu::cuda {

inline void check_launch(cudaError_t e, const char* what) {
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    throw error(std::string("fusor: launching ") + what + " failed: " + cudaGetErrorName(e) + " (" +
                cudaGetErrorString(e) + ")");
}

constexpr int block_threads = 256;
static_assert(block_threads == reduce_block_threads, "the reductions' chunks are counted in these blocks");
constexpr int items_per_thread = 4;

inline unsigned grid_for(index_t n) {
  const index_t per_block = block_threads * items_per_thread;
  index_t blocks = (n + per_block - 1) / per_block;
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // a grid-stride loop covers the rest
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// ---------------------------------------------------------------- elementwise

template <class E, class Ev, class Index, bool Dense>
__global__ void __launch_bounds__(block_threads) fused_group_kernel(const Ev ev, E* __restrict__ dest, const ew_space s) {
  const Index n = static_cast<Index>(s.n);
  const Index stride = static_cast<Index>(blockDim.x) * static_cast<Index>(gridDim.x);
  Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + static_cast<Index>(threadIdx.x);
#pragma unroll 4
  for (; i < n; i += stride) {
    if constexpr (Dense) {
      dest[i] = static_cast<E>(ev.dense(static_cast<index_t>(i)));
    } else {
      const E v = static_cast<E>(strided_element(ev, s, i));
      if (s.out_contiguous) dest[i] = v;
      else dest[destination_of(s, static_cast<index_t>(i))] = v;  // an update of a view
    }
  }
}

/// The evaluator as CUB's DeviceTransform calls it: on the values of its
/// leaves, in leaf order.
template <class Ev, class... T>
struct value_functor {
  Ev ev;
  __device__ __forceinline__ typename Ev::value_type operator()(T... v) const {
    tuple<T...> values{};
    assign(values, std::index_sequence_for<T...>{}, v...);
    return ev.template values<0>(values);
  }
  template <std::size_t... K>
  __device__ __forceinline__ static void assign(tuple<T...>& t, std::index_sequence<K...>, T... v) {
    ((get<K>(t) = v), ...);
  }
};

template <class Ev, class Types>
struct transform_call;
template <class Ev, class... T>
struct transform_call<Ev, leaf_types<T...>> {
  template <class E>
  static cudaError_t run(const Ev& ev, E* dest, index_t n, cudaStream_t stream) {
    const void* data[sizeof...(T) + 1] = {};
    std::size_t k = 0;
    Ev copy = ev;
    for_each_leaf(copy, [&](auto& l) { data[k++] = l.data; });
    return launch(ev, dest, n, stream, data, std::index_sequence_for<T...>{});
  }
  template <class E, std::size_t... K>
  static cudaError_t launch(const Ev& ev, E* dest, index_t n, cudaStream_t stream, const void* const* data,
                            std::index_sequence<K...>) {
    auto inputs = ::cuda::std::make_tuple(static_cast<const T*>(data[K])...);
    if (n <= index_t{0x7fffffff})
      return cub::DeviceTransform::Transform(inputs, dest, static_cast<int>(n), value_functor<Ev, T...>{ev}, stream);
    return cub::DeviceTransform::Transform(inputs, dest, n, value_functor<Ev, T...>{ev}, stream);
  }
};

/// Whether every leaf reads contiguously (stride 1): DeviceTransform's case.
template <class Ev>
bool all_contiguous(const Ev& ev, const ew_space& s) {
  if (!s.dense || Ev::leaves == 0) return false;
  bool ok = true;
  Ev copy = ev;
  for_each_leaf(copy, [&](auto& l) { ok = ok && l.slot >= 0 && l.strides[0] == 1; });  // an index is no array
  return ok;
}

template <class E, class Ev>
void launch_group(const void* evp, void* destp, const ew_space* sp, void* streamp) {
  const ew_space& s = *sp;
  const Ev& ev = *static_cast<const Ev*>(evp);
  E* dest = static_cast<E*>(destp);
  auto stream = static_cast<cudaStream_t>(streamp);
  if (s.n == 0) return;
  if (all_contiguous(ev, s)) {
    check_launch(transform_call<Ev, typename leaf_types_of<Ev>::type>::run(ev, dest, s.n, stream),
                 "cub::DeviceTransform");
    return;
  }
  const unsigned grid = grid_for(s.n);
  const bool small = s.n <= index_t{0x7fffffff};
  if (s.dense) {
    if (small) fused_group_kernel<E, Ev, std::int32_t, true><<<grid, block_threads, 0, stream>>>(ev, dest, s);
    else fused_group_kernel<E, Ev, index_t, true><<<grid, block_threads, 0, stream>>>(ev, dest, s);
  } else {
    if (small) fused_group_kernel<E, Ev, std::int32_t, false><<<grid, block_threads, 0, stream>>>(ev, dest, s);
    else fused_group_kernel<E, Ev, index_t, false><<<grid, block_threads, 0, stream>>>(ev, dest, s);
  }
  check_launch(cudaSuccess, "a fused elementwise kernel");
}

// ---------------------------------------------------------------- several outputs in one pass

template <std::size_t N>
struct dest_array {
  void* p[N];
};

template <class Evs, class Index, bool Dense, class... E, std::size_t... K>
__device__ __forceinline__ void multi_element(const Evs& evs, const dest_array<sizeof...(E)>& d, const ew_space& s,
                                              Index i, std::index_sequence<K...>) {
  if constexpr (Dense)
    ((static_cast<E*>(d.p[K])[i] = static_cast<E>(get<K>(evs).dense(static_cast<index_t>(i)))), ...);
  else
    ((static_cast<E*>(d.p[K])[i] = static_cast<E>(strided_element(get<K>(evs), s, i))), ...);
}

template <class Evs, class Index, bool Dense, class... E>
__global__ void __launch_bounds__(block_threads)
    fused_multi_kernel(const Evs evs, const dest_array<sizeof...(E)> d, const ew_space s) {
  const Index n = static_cast<Index>(s.n);
  const Index stride = static_cast<Index>(blockDim.x) * static_cast<Index>(gridDim.x);
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + static_cast<Index>(threadIdx.x);
       i < n; i += stride)
    multi_element<Evs, Index, Dense, E...>(evs, d, s, i, std::index_sequence_for<E...>{});
}

/// The evaluators as DeviceTransform calls them: on the values of all their
/// leaves (in order: the first evaluator's, then the second's...), returning
/// one value per output into a zip of the destinations.
template <class Evs, class Outs, class... T>
struct multi_value_functor;
// (The patterns below spell the tuple's class, not its alias `tuple<Ev...>`:
// an alias over index_sequence_for<Ev...> cannot be deduced from.)
template <std::size_t... I, class... Ev, class... E, class... T>
struct multi_value_functor<::fusor::detail::operand_tuple_base<std::index_sequence<I...>, Ev...>, leaf_types<E...>,
                           T...> {
  tuple<Ev...> evs;
  template <std::size_t K>
  static constexpr std::size_t offset() {
    constexpr std::size_t counts[] = {Ev::leaves..., 0};
    std::size_t n = 0;
    for (std::size_t j = 0; j < K; ++j) n += counts[j];
    return n;
  }
  __device__ __forceinline__ thrust::tuple<E...> operator()(T... v) const {
    tuple<T...> values{};
    value_functor<scalar<int>, T...>::assign(values, std::index_sequence_for<T...>{}, v...);
    return compute(values, std::index_sequence_for<Ev...>{});
  }
  template <std::size_t... K>
  __device__ __forceinline__ thrust::tuple<E...> compute(const tuple<T...>& values, std::index_sequence<K...>) const {
    return thrust::make_tuple(static_cast<E>(get<K>(evs).template values<offset<K>()>(values))...);
  }
};

template <class Evs, class Outs, class Leaves>
struct multi_transform_call;
template <std::size_t... I, class... Ev, class... E, class... T>
struct multi_transform_call<::fusor::detail::operand_tuple_base<std::index_sequence<I...>, Ev...>, leaf_types<E...>,
                            leaf_types<T...>> {
  static cudaError_t run(const tuple<Ev...>& evs, void* const* dests, index_t n, cudaStream_t stream) {
    const void* data[sizeof...(T) + 1] = {};
    std::size_t k = 0;
    tuple<Ev...> copy = evs;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (for_each_leaf(get<J>(copy), [&](auto& l) { data[k++] = l.data; }), ...);
    }(std::index_sequence_for<Ev...>{});
    return launch(evs, dests, n, stream, data, std::index_sequence_for<T...>{}, std::index_sequence_for<E...>{});
  }
  template <std::size_t... K, std::size_t... O>
  static cudaError_t launch(const tuple<Ev...>& evs, void* const* dests, index_t n, cudaStream_t stream,
                            const void* const* data, std::index_sequence<K...>, std::index_sequence<O...>) {
    auto inputs = ::cuda::std::make_tuple(static_cast<const T*>(data[K])...);
    auto outputs = thrust::make_zip_iterator(static_cast<E*>(dests[O])...);
    multi_value_functor<tuple<Ev...>, leaf_types<E...>, T...> op{evs};
    if (n <= index_t{0x7fffffff}) return cub::DeviceTransform::Transform(inputs, outputs, static_cast<int>(n), op, stream);
    return cub::DeviceTransform::Transform(inputs, outputs, n, op, stream);
  }
};

template <class... L>
struct concat_all;
template <>
struct concat_all<> {
  using type = leaf_types<>;
};
template <class A, class... Rest>
struct concat_all<A, Rest...> {
  using type = typename concat<A, typename concat_all<Rest...>::type>::type;
};

template <class Evs>
struct all_leaf_types;
template <std::size_t... I, class... Ev>
struct all_leaf_types<::fusor::detail::operand_tuple_base<std::index_sequence<I...>, Ev...>> {
  using type = typename concat_all<typename leaf_types_of<Ev>::type...>::type;
};

template <class Evs, class... E>
void launch_multi(const void* evsp, void* const* dests, const ew_space* sp, void* streamp) {
  const ew_space& s = *sp;
  const Evs& evs = *static_cast<const Evs*>(evsp);
  auto stream = static_cast<cudaStream_t>(streamp);
  if (s.n == 0) return;
  constexpr std::size_t n_out = sizeof...(E);
  bool contiguous = s.dense;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((contiguous = contiguous && all_contiguous(get<K>(evs), s)), ...);
  }(std::make_index_sequence<n_out>{});
  if (contiguous) {
    check_launch(multi_transform_call<Evs, leaf_types<E...>, typename all_leaf_types<Evs>::type>::run(evs, dests, s.n,
                                                                                                      stream),
                 "cub::DeviceTransform (several outputs)");
    return;
  }
  dest_array<n_out> d{};
  for (std::size_t k = 0; k < n_out; ++k) d.p[k] = dests[k];
  const unsigned grid = grid_for(s.n);
  const bool small = s.n <= index_t{0x7fffffff};
  if (s.dense) {
    if (small) fused_multi_kernel<Evs, std::int32_t, true, E...><<<grid, block_threads, 0, stream>>>(evs, d, s);
    else fused_multi_kernel<Evs, index_t, true, E...><<<grid, block_threads, 0, stream>>>(evs, d, s);
  } else {
    if (small) fused_multi_kernel<Evs, std::int32_t, false, E...><<<grid, block_threads, 0, stream>>>(evs, d, s);
    else fused_multi_kernel<Evs, index_t, false, E...><<<grid, block_threads, 0, stream>>>(evs, d, s);
  }
  check_launch(cudaSuccess, "a fused multi-output kernel");
}

// ---------------------------------------------------------------- reductions

template <class Acc>
struct merge_op {
  __device__ __forceinline__ Acc operator()(Acc a, const Acc& b) const {
    a.merge(b);
    return a;
  }
};

/// Block b reduces chunk (b % chunks) of output (b / chunks): into `out`
/// (finished) when there is one chunk, into `partials` otherwise.
template <class Op, class R, class Ev>
__global__ void __launch_bounds__(block_threads)
    fused_reduce_kernel(const Ev ev, void* out, const red_space s, void* partials) {
  using Acc = accumulator<Op, R, typename Ev::value_type>;
  using block_reduce = cub::BlockReduce<Acc, block_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  const index_t blocks = s.nout * s.chunks;
  for (index_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const index_t o = b / s.chunks, c = b % s.chunks;
    const index_t begin = c * static_cast<index_t>(block_threads) + threadIdx.x;
    const index_t step = s.chunks * static_cast<index_t>(block_threads);
    const Acc mine = reduce_share<Op, R>(ev, s, o, begin, step);
    const Acc all = block_reduce(temp).Reduce(mine, merge_op<Acc>{});
    if (threadIdx.x == 0) {
      if (s.chunks == 1) {
        using Out = decltype(finish(all, s.nred));
        static_cast<Out*>(out)[o] = finish(all, s.nred);
      } else {
        static_cast<Acc*>(partials)[b] = all;
      }
    }
    __syncthreads();  // the temporary storage is reused by the next output
  }
}

/// Warp w of block b reduces output b * warps + w (see by_warps),
/// merged by shuffles: no block-wide merge, eight outputs per block.
template <class Op, class R, class Ev>
__global__ void __launch_bounds__(block_threads) warp_reduce_kernel(const Ev ev, void* out, const red_space s) {
  using Acc = accumulator<Op, R, typename Ev::value_type>;
  constexpr int warps = block_threads / 32;
  using warp_reduce = cub::WarpReduce<Acc>;
  __shared__ typename warp_reduce::TempStorage temp[warps];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (index_t o = static_cast<index_t>(blockIdx.x) * warps + warp; o < s.nout;
       o += static_cast<index_t>(gridDim.x) * warps) {
    const Acc mine = reduce_share<Op, R>(ev, s, o, lane, 32);
    const Acc all = warp_reduce(temp[warp]).Reduce(mine, merge_op<Acc>{});
    if (lane == 0) {
      using Out = decltype(finish(all, s.nred));
      static_cast<Out*>(out)[o] = finish(all, s.nred);
    }
    __syncwarp();  // the warp's temporary storage is reused by its next output
  }
}

/// A reduction by columns (red_space::by_columns): thread t of block b takes
/// output (b % column blocks) * block_threads + t and its rows of chunk
/// (b / column blocks); into `out` when there is one chunk, into `partials`
/// (output-major, as merge_partials_kernel reads them) otherwise.
template <class Op, class R, class Ev>
__global__ void __launch_bounds__(block_threads)
    column_reduce_kernel(const Ev ev, void* out, const red_space s, void* partials) {
  using Acc = accumulator<Op, R, typename Ev::value_type>;
  const index_t blocks = column_blocks(s.nout);
  const index_t rows = (s.nred + s.chunks - 1) / s.chunks;
  for (index_t b = blockIdx.x; b < blocks * s.chunks; b += gridDim.x) {
    const index_t o = (b % blocks) * block_threads + threadIdx.x, c = b / blocks;
    if (o >= s.nout) continue;
    const index_t begin = c * rows, end = begin + rows < s.nred ? begin + rows : s.nred;
    const Acc acc = reduce_rows<Op, R>(ev, o, begin, end);
    if (s.chunks == 1) {
      using Out = decltype(finish(acc, s.nred));
      static_cast<Out*>(out)[o] = finish(acc, s.nred);
    } else {
      static_cast<Acc*>(partials)[o * s.chunks + c] = acc;
    }
  }
}

/// Merges the partial accumulators of each output (one block per output).
template <class Op, class R, class V>
__global__ void __launch_bounds__(block_threads) merge_partials_kernel(const void* partials, void* out, const red_space s) {
  using Acc = accumulator<Op, R, V>;
  using block_reduce = cub::BlockReduce<Acc, block_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  for (index_t o = blockIdx.x; o < s.nout; o += gridDim.x) {
    Acc mine = Acc::identity();
    for (index_t c = threadIdx.x; c < s.chunks; c += block_threads)
      mine.merge(static_cast<const Acc*>(partials)[o * s.chunks + c]);
    const Acc all = block_reduce(temp).Reduce(mine, merge_op<Acc>{});
    if (threadIdx.x == 0) {
      using Out = decltype(finish(all, s.nred));
      static_cast<Out*>(out)[o] = finish(all, s.nred);
    }
    __syncthreads();
  }
}

template <class Op, class R, class Ev>
void launch_reduce(const void* evp, void* out, const red_space* sp, void* partials, void* streamp) {
  const red_space& s = *sp;
  const Ev& ev = *static_cast<const Ev*>(evp);
  auto stream = static_cast<cudaStream_t>(streamp);
  if (s.nout == 0) return;
  constexpr index_t warps = block_threads / 32;
  const bool warp_each = by_warps(s);
  const index_t blocks = s.by_columns ? column_blocks(s.nout) * s.chunks
                         : warp_each  ? (s.nout + warps - 1) / warps
                                      : s.nout * s.chunks;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
  if (s.by_columns) column_reduce_kernel<Op, R, Ev><<<grid, block_threads, 0, stream>>>(ev, out, s, partials);
  else if (warp_each) warp_reduce_kernel<Op, R, Ev><<<grid, block_threads, 0, stream>>>(ev, out, s);
  else fused_reduce_kernel<Op, R, Ev><<<grid, block_threads, 0, stream>>>(ev, out, s, partials);
  check_launch(cudaSuccess, "a reduction kernel");
  if (s.chunks > 1) {
    const unsigned merge_grid = static_cast<unsigned>(s.nout < 65535 * 8 ? s.nout : 65535 * 8);
    merge_partials_kernel<Op, R, typename Ev::value_type><<<merge_grid, block_threads, 0, stream>>>(partials, out, s);
    check_launch(cudaSuccess, "a reduction's merge kernel");
  }
}

}  // namespace fusor::gpu::cuda
