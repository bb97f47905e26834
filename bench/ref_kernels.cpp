// bench/ref_kernels.cpp — hand-written reference loops (see ref_kernels.hpp).
// Compiled with -O3 -march=native -mprefer-vector-width=512.
#include "ref_kernels.hpp"

#include <cmath>

namespace ref {

template <class T>
void copy(T* __restrict c, const T* __restrict a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) c[j] = a[j];
}
template <class T>
void scale(T* __restrict b, const T* __restrict c, T q, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) b[j] = q * c[j];
}
template <class T>
void add(T* __restrict c, const T* __restrict a, const T* __restrict b, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) c[j] = a[j] + b[j];
}
template <class T>
void triad(T* __restrict a, const T* __restrict b, const T* __restrict c, T q, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) a[j] = b[j] + q * c[j];
}

template <class T>
T* stream_arrays<T>::a = nullptr;
template <class T>
T* stream_arrays<T>::b = nullptr;
template <class T>
T* stream_arrays<T>::c = nullptr;
template <class T>
std::size_t stream_arrays<T>::n = 0;

template <class T>
void stream_triad(T scalar) {
  T* a = stream_arrays<T>::a;
  T* b = stream_arrays<T>::b;
  T* c = stream_arrays<T>::c;
  const std::size_t n = stream_arrays<T>::n;
  for (std::size_t j = 0; j < n; j++) a[j] = b[j] + scalar * c[j];
}

template <class T>
void w2(T* __restrict o, const T* __restrict a, const T* __restrict b, const T* __restrict c,
        const T* __restrict d, const T* __restrict e, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) o[j] = a[j] * b[j] + c[j] * d[j] - e[j];
}

template <class T>
void w3(T* __restrict o, const T* __restrict a, const T* __restrict b, const T* __restrict c,
        const T* __restrict d, const T* __restrict e, const T* __restrict f, const T* __restrict g,
        const T* __restrict h, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) o[j] = ((a[j] + b[j]) * (c[j] - d[j]) + e[j] * f[j]) / (g[j] + h[j]);
}

#define REF_INSTANTIATE(T)                                                                                      \
  template void copy<T>(T* __restrict, const T* __restrict, std::size_t);                                     \
  template void scale<T>(T* __restrict, const T* __restrict, T, std::size_t);                                 \
  template void add<T>(T* __restrict, const T* __restrict, const T* __restrict, std::size_t);                 \
  template void triad<T>(T* __restrict, const T* __restrict, const T* __restrict, T, std::size_t);            \
  template struct stream_arrays<T>;                                                                            \
  template void stream_triad<T>(T);                                                                            \
  template void w2<T>(T* __restrict, const T* __restrict, const T* __restrict, const T* __restrict,           \
                      const T* __restrict, const T* __restrict, std::size_t);                                  \
  template void w3<T>(T* __restrict, const T* __restrict, const T* __restrict, const T* __restrict,           \
                      const T* __restrict, const T* __restrict, const T* __restrict, const T* __restrict,      \
                      const T* __restrict, std::size_t);
REF_INSTANTIATE(float)
REF_INSTANTIATE(double)
#undef REF_INSTANTIATE

// ---------------------------------------------------------------- W4

void w4_scalar(double* __restrict o, const double* __restrict x, const double* __restrict y, std::size_t rows,
               std::size_t cols) {
  for (std::size_t i = 0; i < rows; ++i) {
    const double* xr = x + i * cols;
    double* orow = o + i * cols;
    for (std::size_t j = 0; j < cols; ++j) orow[j] = std::exp(2.0 * xr[j] * y[j] + y[j]);
  }
}

// ---------------------------------------------------------------- W5

namespace {
template <class S>
void scalar_loop(S s, double* __restrict o, const double* __restrict a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) o[i] = s(a[i]);
}
}  // namespace

void w5_scalar(unary f, double* __restrict o, const double* __restrict a, std::size_t n) {
  switch (f) {
    case unary::exp:
      scalar_loop([](double x) { return std::exp(x); }, o, a, n);
      break;
    case unary::log:
      scalar_loop([](double x) { return std::log(x); }, o, a, n);
      break;
    case unary::tanh:
      scalar_loop([](double x) { return std::tanh(x); }, o, a, n);
      break;
    case unary::sigmoid:
      scalar_loop([](double x) { return 1.0 / (1.0 + std::exp(-x)); }, o, a, n);
      break;
  }
}

void w5_mixed_scalar(double* __restrict o, const double* __restrict a, const double* __restrict b,
                     const double* __restrict c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) o[i] = std::exp(a[i]) * b[i] + std::log1p(c[i]);
}

}  // namespace ref
