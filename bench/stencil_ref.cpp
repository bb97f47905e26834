// bench/stencil_ref.cpp — hand-written Jacobi loops for bench_stencil.cpp, in
// their own TU (built with -mprefer-vector-width=512
// -fno-tree-loop-distribute-patterns, like function_ref.cpp) so they are not
// inlined into the benchmark and vectorise at the width xsimd uses.
#include "stencil_ref.hpp"

#include <cstring>

namespace sref {

namespace {
inline void interior_row(double* __restrict d, const double* __restrict up, const double* __restrict mid,
                         const double* __restrict down, std::size_t n) {
  for (std::size_t j = 1; j + 1 < n; ++j) d[j] = (up[j] + down[j] + mid[j - 1] + mid[j + 1]) * 0.25;
}
}  // namespace

void jacobi(double* __restrict dst, const double* __restrict src, std::size_t n) {
  for (std::size_t i = 1; i + 1 < n; ++i) interior_row(dst + i * n, src + (i - 1) * n, src + i * n, src + (i + 1) * n, n);
}

void jacobi_copy_border(double* __restrict dst, const double* __restrict src, std::size_t n) {
  std::memcpy(dst, src, n * sizeof(double));
  for (std::size_t i = 1; i + 1 < n; ++i) {
    dst[i * n] = src[i * n];
    interior_row(dst + i * n, src + (i - 1) * n, src + i * n, src + (i + 1) * n, n);
    dst[i * n + n - 1] = src[i * n + n - 1];
  }
  std::memcpy(dst + (n - 1) * n, src + (n - 1) * n, n * sizeof(double));
}

}  // namespace sref
