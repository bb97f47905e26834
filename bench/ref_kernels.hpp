// bench/ref_kernels.hpp — the hand-written reference kernels of the CPU suite.
//
// They live in their own translation unit (ref_kernels.cpp), compiled with
// -mprefer-vector-width=512 so that GCC's auto-vectoriser uses the same 512-bit
// registers as xsimd's AVX-512 batches, and so that the calls cannot be inlined
// into (and optimised away by) the benchmark loops.
#pragma once

#include <cstddef>

namespace ref {

// ---------------------------------------------------------------- W1 (STREAM)
// __restrict hand loops, the same arithmetic as STREAM's kernels.
template <class T>
void copy(T* __restrict c, const T* __restrict a, std::size_t n);  // c = a
template <class T>
void scale(T* __restrict b, const T* __restrict c, T q, std::size_t n);  // b = q*c
template <class T>
void add(T* __restrict c, const T* __restrict a, const T* __restrict b, std::size_t n);  // c = a + b
template <class T>
void triad(T* __restrict a, const T* __restrict b, const T* __restrict c, T q, std::size_t n);  // a = b + q*c

/// STREAM's triad exactly as stream.c writes it: `a[j] = b[j]+scalar*c[j]` over
/// global arrays (no __restrict; the compiler sees globals, as in stream.c).
template <class T>
struct stream_arrays {
  static T* a;
  static T* b;
  static T* c;
  static std::size_t n;
};
template <class T>
void stream_triad(T scalar);

// ---------------------------------------------------------------- W2, W3
template <class T>
void w2(T* __restrict o, const T* __restrict a, const T* __restrict b, const T* __restrict c,
        const T* __restrict d, const T* __restrict e, std::size_t n);  // o = a*b + c*d - e
template <class T>
void w3(T* __restrict o, const T* __restrict a, const T* __restrict b, const T* __restrict c,
        const T* __restrict d, const T* __restrict e, const T* __restrict f, const T* __restrict g,
        const T* __restrict h, std::size_t n);  // o = ((a+b)*(c-d) + e*f)/(g+h)

// ---------------------------------------------------------------- W4
// o = exp(2*x*y + y), x rows×cols row-major, y (cols), o rows×cols.
void w4_scalar(double* __restrict o, const double* __restrict x, const double* __restrict y, std::size_t rows,
               std::size_t cols);  // std::exp per element

// ---------------------------------------------------------------- W5
enum class unary { exp, log, tanh, sigmoid };
/// o = f(a) with std:: functions, one element at a time.
void w5_scalar(unary f, double* __restrict o, const double* __restrict a, std::size_t n);
/// o = exp(a)*b + log1p(c), std:: functions.
void w5_mixed_scalar(double* __restrict o, const double* __restrict a, const double* __restrict b,
                     const double* __restrict c, std::size_t n);

}  // namespace ref

// ---------------------------------------------------------------- raw xsimd loops
// ref_xsimd.cpp, compiled twice: ref_same with bench_expr.cpp's own flags (the
// like-for-like reference), ref_w512 with -mprefer-vector-width=512 added.
#define REF_XSIMD_DECLARATIONS                                                                              \
  /* o = exp(2*x*y + y): xsimd batches along each row, unaligned loads */                                   \
  void w4_xsimd(double* __restrict o, const double* __restrict x, const double* __restrict y,               \
                std::size_t rows, std::size_t cols);                                                         \
  /* o = f(a): load_aligned / store_aligned batches, scalar tail; a and o 64-byte aligned */                \
  void w5_xsimd(ref::unary f, double* __restrict o, const double* __restrict a, std::size_t n);             \
  /* o = exp(a)*b + log1p(c) */                                                                              \
  void w5_mixed_xsimd(double* __restrict o, const double* __restrict a, const double* __restrict b,         \
                      const double* __restrict c, std::size_t n);
namespace ref_same {
REF_XSIMD_DECLARATIONS
}
namespace ref_w512 {
REF_XSIMD_DECLARATIONS
}
#undef REF_XSIMD_DECLARATIONS
