// bench/ref_select.cpp — the reference loops of bench_select.cpp, in their own
// translation unit (not inlined into the timing loops), built with
// bench_expr.cpp's flags: raw xsimd loops, NaN-propagating (the like-for-like
// reference) and with xsimd::max / xsimd::min (the instructions' own NaN
// handling: the speed ceiling, not NumPy's semantics), and scalar std:: loops.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "ref_select.hpp"

namespace ref_select {
namespace {
using B = xsimd::batch<double>;
constexpr std::size_t w = B::size;

B relu_nan(B a) { return xsimd::select((a < B(0.0)) & !xsimd::isnan(a), B(0.0), a); }
B clip_nan(B a) {
  const B lo(-1.0), hi(1.0);
  const B m = xsimd::select(a < lo, lo, a);  // a NaN a stays
  return xsimd::select(hi < m, hi, m);
}
double relu_s(double a) { return a < 0.0 ? 0.0 : a; }
double clip_s(double a) { return a < -1.0 ? -1.0 : (1.0 < a ? 1.0 : a); }
}  // namespace

void relu(kind k, double* __restrict o, const double* __restrict a, std::size_t n) {
  std::size_t i = 0;
  if (k == kind::xsimd_nan)
    for (; i + w <= n; i += w) relu_nan(B::load_aligned(a + i)).store_aligned(o + i);
  else if (k == kind::xsimd_max)
    for (; i + w <= n; i += w) xsimd::max(B::load_aligned(a + i), B(0.0)).store_aligned(o + i);
  for (; i < n; ++i) o[i] = relu_s(a[i]);
}

void clip(kind k, double* __restrict o, const double* __restrict a, std::size_t n) {
  std::size_t i = 0;
  if (k == kind::xsimd_nan)
    for (; i + w <= n; i += w) clip_nan(B::load_aligned(a + i)).store_aligned(o + i);
  else if (k == kind::xsimd_max)
    for (; i + w <= n; i += w)
      xsimd::min(xsimd::max(B::load_aligned(a + i), B(-1.0)), B(1.0)).store_aligned(o + i);
  for (; i < n; ++i) o[i] = clip_s(a[i]);
}

double max(kind k, const double* __restrict a, std::size_t n) {
  std::size_t i = 0;
  double acc = -INFINITY;
  if (k != kind::scalar && n >= 4 * w) {
    B a0(acc), a1(acc), a2(acc), a3(acc);
    auto comb = [k](B x, B y) {
      return k == kind::xsimd_nan ? xsimd::select((x < y) | xsimd::isnan(y), y, x) : xsimd::max(x, y);
    };
    for (; i + 4 * w <= n; i += 4 * w) {
      a0 = comb(a0, B::load_aligned(a + i));
      a1 = comb(a1, B::load_aligned(a + i + w));
      a2 = comb(a2, B::load_aligned(a + i + 2 * w));
      a3 = comb(a3, B::load_aligned(a + i + 3 * w));
    }
    const B all = comb(comb(a0, a1), comb(a2, a3));
    alignas(64) double lanes[w];
    all.store_aligned(lanes);
    for (std::size_t l = 0; l < w; ++l) acc = (acc < lanes[l] || lanes[l] != lanes[l]) ? lanes[l] : acc;
  }
  for (; i < n; ++i) acc = (acc < a[i] || a[i] != a[i]) ? a[i] : acc;
  return acc;
}

}  // namespace ref_select
