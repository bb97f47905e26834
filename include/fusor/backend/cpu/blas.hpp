// fusor/backend/cpu/blas.hpp — dot products through BLAS (xtensor-blas over
// OpenBLAS) for float and double; a plain loop for integer dtypes.
#pragma once

#include <cstddef>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor-blas/xblas.hpp>

#include "fusor/expr/functors.hpp"

namespace fusor::cpu {

/// C[m x k] = op(A) * op(B) with op(A) m x n and op(B) n x k, all contiguous
/// row-major; `trans_a` means A is stored as its n x m transpose (likewise B),
/// so a transposed operand is handed to BLAS as is instead of being copied.
/// Vectors are the m == 1 or k == 1 cases.
template <class E>
void matmul(const E* a, const E* b, E* c, std::size_t m, std::size_t n, std::size_t k, bool trans_a = false,
            bool trans_b = false) {
  if constexpr (std::is_same_v<E, float> || std::is_same_v<E, double>) {
    if (m == 0 || k == 0) return;
    if (n == 0) {
      for (std::size_t i = 0; i < m * k; ++i) c[i] = E(0);
      return;
    }
    using shape2 = std::array<std::size_t, 2>;
    auto A = xt::adapt(const_cast<E*>(a), m * n, xt::no_ownership(), trans_a ? shape2{n, m} : shape2{m, n});
    auto B = xt::adapt(const_cast<E*>(b), n * k, xt::no_ownership(), trans_b ? shape2{k, n} : shape2{n, k});
    auto C = xt::adapt(c, m * k, xt::no_ownership(), shape2{m, k});
    xt::blas::gemm(A, B, C, trans_a, trans_b);
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
