// fusor/backend/cpu/simd.hpp — the one place fusor includes xsimd.
//
// Batch types for the fused loops, and the batch overload of fn::select that
// the portable functors call unqualified.
#pragma once

#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace fusor::cpu {

/// Element types the fused loops vectorise; other dtypes run the scalar loop
/// (which the compiler may still vectorise).
template <class E>
inline constexpr bool simd_element = std::is_same_v<E, float> || std::is_same_v<E, double>;

template <class E>
using batch = xsimd::batch<E>;

template <class E>
inline constexpr std::size_t batch_size = simd_element<E> ? xsimd::batch<E>::size : 1;

/// Byte alignment a batch load/store of E needs to take the aligned path.
template <class E>
inline constexpr std::size_t batch_alignment = simd_element<E> ? xsimd::batch<E>::arch_type::alignment() : 1;

template <class E>
inline bool is_batch_aligned(const E* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % batch_alignment<E> == 0;
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
