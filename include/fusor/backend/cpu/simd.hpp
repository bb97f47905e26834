// fusor/backend/cpu/simd.hpp — the one place fusor includes xsimd.
//
// Batch types for the fused loops, and the batch overload of fn::select that
// the portable functors call unqualified.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fusor/backend/cpu/unoptimised_blends.hpp"  // before xsimd, which names them

#include <xsimd/xsimd.hpp>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__linux__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace fusor::cpu {

/// Element types the fused loops vectorise; other dtypes run the scalar loop
/// (which the compiler may still vectorise).
template <class E>
inline constexpr bool simd_element = std::is_same_v<E, float> || std::is_same_v<E, double>;

/// Integer lane types: arrays of these load and store as batches, and the
/// operations that have an exact batch form (integer_batch_op_v in
/// evaluator.hpp) run on them vectorised. Narrower integers and bool stay scalar.
template <class E>
inline constexpr bool simd_integer = std::is_same_v<E, std::int32_t> || std::is_same_v<E, std::uint32_t> ||
                                     std::is_same_v<E, std::int64_t> || std::is_same_v<E, std::uint64_t>;

/// A type arrays of which load and store as xsimd batches.
template <class E>
inline constexpr bool simd_lane = simd_element<E> || simd_integer<E>;

template <class E>
using batch = xsimd::batch<E>;

/// A load mode for rows in which no array leaf is broadcast (every leaf
/// steps by one element): leaves load without testing their stride per batch
/// (a test GCC does not hoist out of the loop). `Mode` is xsimd's alignment.
template <class Mode>
struct dense {};
template <class Mode>
inline constexpr bool is_dense_v = false;
template <class Mode>
inline constexpr bool is_dense_v<dense<Mode>> = true;
template <class Mode>
struct xsimd_mode {
  using type = Mode;
};
template <class Mode>
struct xsimd_mode<dense<Mode>> {
  using type = Mode;
};
template <class Mode>
using xsimd_mode_t = typename xsimd_mode<Mode>::type;

/// The lanes of a mask over batches of T from batch<T>::size bools (bytes 0
/// or 1): the bytes are widened to integers of T's width in a fixed-size loop
/// the compiler turns into one vector widening, compared with zero as
/// integers, and the mask reinterpreted for T. (xsimd's
/// batch_bool::load_unaligned goes through a scalar loop and memory.)
template <class T>
xsimd::batch_bool<T> mask_from_bytes(const bool* p) noexcept {
  using I = xsimd::as_integer_t<T>;
  constexpr std::size_t w = batch<T>::size;
  std::uint8_t bytes[w];
  std::memcpy(bytes, p, w);
  alignas(64) I lanes[w];
  for (std::size_t k = 0; k < w; ++k) lanes[k] = static_cast<I>(bytes[k]);
  return xsimd::bool_cast(xsimd::batch<I>::load_aligned(lanes) != xsimd::batch<I>(I(0)));
}

template <class E>
inline constexpr std::size_t batch_size = simd_lane<E> ? xsimd::batch<E>::size : 1;

/// Byte alignment a batch load/store of E needs to take the aligned path.
template <class E>
inline constexpr std::size_t batch_alignment = simd_lane<E> ? xsimd::batch<E>::arch_type::alignment() : 1;

template <class E>
inline bool is_batch_aligned(const E* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % batch_alignment<E> == 0;
}

/// Whether this build can store a batch of E without going through the cache
/// (a non-temporal store: x86's movntp*).
template <class E>
inline constexpr bool can_stream = [] {
#if defined(__SSE2__)
  constexpr std::size_t bytes = sizeof(E) * batch_size<E>;
  return simd_element<E> && (bytes == 16 || bytes == 32 || bytes == 64);
#else
  return false;
#endif
}();

/// Stores a batch with a non-temporal store: the line goes to memory without
/// being read first (no write-allocate traffic) and without evicting what the
/// caches hold. `p` must be aligned to the batch. Only for outputs that are
/// not read back soon; stream_fence() orders them before anything after.
template <class E>
inline void store_stream(E* p, const xsimd::batch<E>& v) noexcept {
#if defined(__SSE2__)
  constexpr std::size_t bytes = sizeof(E) * xsimd::batch<E>::size;
  if constexpr (std::is_same_v<E, double>) {
    if constexpr (bytes == 16) _mm_stream_pd(p, v.data);
#if defined(__AVX__)
    else if constexpr (bytes == 32) _mm256_stream_pd(p, v.data);
#endif
#if defined(__AVX512F__)
    else if constexpr (bytes == 64) _mm512_stream_pd(p, v.data);
#endif
    else v.store_aligned(p);
  } else if constexpr (std::is_same_v<E, float>) {
    if constexpr (bytes == 16) _mm_stream_ps(p, v.data);
#if defined(__AVX__)
    else if constexpr (bytes == 32) _mm256_stream_ps(p, v.data);
#endif
#if defined(__AVX512F__)
    else if constexpr (bytes == 64) _mm512_stream_ps(p, v.data);
#endif
    else v.store_aligned(p);
  } else {
    v.store_aligned(p);
  }
#else
  v.store_aligned(p);
#endif
}

inline void stream_fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/// The last-level cache's size (asked once), or 32 MiB when the system does
/// not say: outputs larger than it are streamed.
inline std::size_t last_level_cache_bytes() noexcept {
  static const std::size_t bytes = [] {
    long n = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    n = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (n <= 0) n = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return n > 0 ? static_cast<std::size_t>(n) : std::size_t{32} << 20;
  }();
  return bytes;
}

/// Horizontal reduction of a batch with a reduction rule (red::sum, ...).
template <class Op, class E>
inline E horizontal(const xsimd::batch<E>& b) noexcept {
  alignas(64) E lanes[xsimd::batch<E>::size];
  b.store_aligned(lanes);
  E acc = lanes[0];
  for (std::size_t i = 1; i < xsimd::batch<E>::size; ++i) acc = Op::combine(acc, lanes[i]);
  return acc;
}

}  // namespace fusor::cpu

namespace xsimd {
// fn::select(cond, a, b) on batches: xsimd's own select is found by
// argument-dependent lookup; nothing more is needed here.
}  // namespace xsimd
