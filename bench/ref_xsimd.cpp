// bench/ref_xsimd.cpp — the raw xsimd reference loops (W4, W5). This file is
// compiled twice: once with exactly the flags of bench_expr.cpp (namespace
// ref_same: the like-for-like reference for fusor) and once with the hand-loop
// flags, -mprefer-vector-width=512 added (namespace ref_w512: informational).
// GCC's choice of vector width also applies to the parts of xsimd's functions
// that it auto-vectorises, so the two builds can differ.
#include <cmath>

#include <xsimd/xsimd.hpp>

#include "ref_kernels.hpp"

#ifndef REF_XSIMD_NS
#error "define REF_XSIMD_NS (ref_same or ref_w512)"
#endif

namespace REF_XSIMD_NS {

using ref::unary;

void w4_xsimd(double* __restrict o, const double* __restrict x, const double* __restrict y, std::size_t rows,
              std::size_t cols) {
  using B = xsimd::batch<double>;
  constexpr std::size_t w = B::size;
  const B two(2.0);
  for (std::size_t i = 0; i < rows; ++i) {
    const double* xr = x + i * cols;
    double* orow = o + i * cols;
    std::size_t j = 0;
    for (; j + w <= cols; j += w) {
      const B yv = B::load_unaligned(y + j);
      xsimd::exp(two * B::load_unaligned(xr + j) * yv + yv).store_unaligned(orow + j);
    }
    for (; j < cols; ++j) orow[j] = std::exp(2.0 * xr[j] * y[j] + y[j]);
  }
}

namespace {
template <class F, class S>
void xsimd_loop(F f, S s, double* __restrict o, const double* __restrict a, std::size_t n) {
  using B = xsimd::batch<double>;
  constexpr std::size_t w = B::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w) f(B::load_aligned(a + i)).store_aligned(o + i);
  for (; i < n; ++i) o[i] = s(a[i]);
}
}  // namespace

void w5_xsimd(unary f, double* __restrict o, const double* __restrict a, std::size_t n) {
  using B = xsimd::batch<double>;
  switch (f) {
    case unary::exp:
      xsimd_loop([](B x) { return xsimd::exp(x); }, [](double x) { return std::exp(x); }, o, a, n);
      break;
    case unary::log:
      xsimd_loop([](B x) { return xsimd::log(x); }, [](double x) { return std::log(x); }, o, a, n);
      break;
    case unary::tanh:
      xsimd_loop([](B x) { return xsimd::tanh(x); }, [](double x) { return std::tanh(x); }, o, a, n);
      break;
    case unary::sigmoid:
      xsimd_loop([](B x) { return B(1.0) / (B(1.0) + xsimd::exp(-x)); },
                 [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, o, a, n);
      break;
  }
}

void w5_mixed_xsimd(double* __restrict o, const double* __restrict a, const double* __restrict b,
                    const double* __restrict c, std::size_t n) {
  using B = xsimd::batch<double>;
  constexpr std::size_t w = B::size;
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    (xsimd::exp(B::load_aligned(a + i)) * B::load_aligned(b + i) + xsimd::log1p(B::load_aligned(c + i)))
        .store_aligned(o + i);
  for (; i < n; ++i) o[i] = std::exp(a[i]) * b[i] + std::log1p(c[i]);
}

}  // namespace REF_XSIMD_NS
