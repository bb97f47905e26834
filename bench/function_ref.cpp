// bench/function_ref.cpp — hand-written reference loops for the function
// workloads (W6, W7, W9), in their own TU (built with
// -mprefer-vector-width=512, like ref_kernels.cpp) so they are not inlined away.
#include <cmath>
#include <cstddef>

namespace fref {

// W6: both outputs of (exp(x/5)*2, exp(x/5)+1) in one pass.
void w6_one_pass(double* __restrict a, double* __restrict b, const double* __restrict x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const double e = std::exp(x[i] / 5.0);
    a[i] = e * 2.0;
    b[i] = e + 1.0;
  }
}

// W7: logp = -((x-mu)**2)/2 and its gradient -(x-mu), one pass.
void w7(double* __restrict logp, double* __restrict grad, const double* __restrict x, const double* __restrict mu,
        std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const double d = x[i] - mu[i];
    logp[i] = -(d * d) / 2.0;
    grad[i] = -d;
  }
}

// W8/W9: o = a*b + c*d - e.
void w2(double* __restrict o, const double* __restrict a, const double* __restrict b, const double* __restrict c,
        const double* __restrict d, const double* __restrict e, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) o[i] = a[i] * b[i] + c[i] * d[i] - e[i];
}

}  // namespace fref
