// bench/ref_select.hpp — reference loops for bench_select.cpp (ref_select.cpp).
#pragma once

#include <cstddef>

namespace ref_select {
enum class kind {
  xsimd_nan,  ///< raw xsimd, NaN propagated as NumPy does (like for like with fusor)
  xsimd_max,  ///< raw xsimd::max / min: what the instruction does with NaN (the ceiling)
  scalar,     ///< one element at a time, NaN propagated
};
/// o = maximum(a, 0)
void relu(kind k, double* __restrict o, const double* __restrict a, std::size_t n);
/// o = clip(a, -1, 1)
void clip(kind k, double* __restrict o, const double* __restrict a, std::size_t n);
/// max(a)
double max(kind k, const double* __restrict a, std::size_t n);
}  // namespace ref_select
