// fusor/backend/cpu/blas.hpp — dot products through BLAS (the CBLAS interface
// of OpenBLAS) for float and double; a plain loop for integer dtypes.
//
// Only cblas.h, a small C header: every translation unit that includes fusor
// pays for it, so not a C++ BLAS wrapper of hundreds of headers.
#pragma once

#include <climits>
#include <cstddef>
#include <string>
#include <type_traits>

#include <cblas.h>

#include "fusor/core/errors.hpp"
#include "fusor/expr/functors.hpp"

namespace fusor::cpu {

/// C[m x k] = op(A) * op(B) with op(A) m x n and op(B) n x k, all contiguous
/// row-major; `trans_a` means A is stored as its n x m transpose (likewise B),
/// so a transposed operand is handed to BLAS as is instead of being copied.
/// Vectors are the m == 1 or k == 1 cases. With `accumulate` (floating point
/// only), C = alpha * op(A) * op(B) + C: an update v - c * dot(a, b) in one call.
template <class E>
void matmul(const E* a, const E* b, E* c, std::size_t m, std::size_t n, std::size_t k, bool trans_a = false,
            bool trans_b = false, double alpha = 1.0, bool accumulate = false) {
  if constexpr (std::is_same_v<E, float> || std::is_same_v<E, double>) {
    if (m == 0 || k == 0) return;
    if (n == 0) {
      if (!accumulate)
        for (std::size_t i = 0; i < m * k; ++i) c[i] = E(0);
      return;
    }
    // BLAS takes int extents (OpenBLAS's default 32-bit interface).
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
      throw shape_error("fusor: dot: an extent above " + std::to_string(INT_MAX) + " (" + std::to_string(m) + " x " +
                        std::to_string(n) + " x " + std::to_string(k) + ") exceeds what BLAS takes");
    const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
    const blasint lda = trans_a ? M : N, ldb = trans_b ? N : K;
    const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
    const E scale = static_cast<E>(alpha), beta = accumulate ? E(1) : E(0);
    if constexpr (std::is_same_v<E, double>)
      cblas_dgemm(CblasRowMajor, ta, tb, M, K, N, scale, a, lda, b, ldb, beta, c, K);
    else
      cblas_sgemm(CblasRowMajor, ta, tb, M, K, N, scale, a, lda, b, ldb, beta, c, K);
  } else {
    // Integers wrap modulo 2^n, as NumPy's dot does (bool: or of ands).
    const fn::plus add;
    const fn::multiplies mul;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        E acc = E(0);
        for (std::size_t p = 0; p < n; ++p)
          acc = static_cast<E>(add(acc, static_cast<E>(mul((trans_a ? a[p * m + i] : a[i * n + p]),
                                                           (trans_b ? b[j * n + p] : b[p * k + j])))));
        c[i * k + j] = acc;
      }
  }
}

}  // namespace fusor::cpu
