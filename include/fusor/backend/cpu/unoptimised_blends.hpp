// fusor/backend/cpu/unoptimised_blends.hpp — GCC's AVX-512BW masked blends
// made usable without optimisation, for xsimd.
//
// GCC's <immintrin.h> defines many intrinsics twice: as always-inline
// functions when optimising, and as macros when not (`__OPTIMIZE__`
// undefined, as at -O0), because the macros pass immediates through. The
// -O0 macros of `_mm512_mask_blend_epi8` and `_mm512_mask_blend_epi16` (GCC
// 12's avx512bwintrin.h) cast their vector operands straight to `__v64qi` and
// `__v32hi`, where the other macros cast to `__m512i` first. xsimd 8 calls
// them with its batches, which convert to `__m512i` only, in the integer
// select of every width (a switch over the element size, every case
// compiled), which its own functions use: the logarithm of doubles selects
// among int64 batches. So without this header a unit built at -O0 for a CPU
// with AVX-512BW (`-O0 -march=native` on such a machine: a debug build, or
// the test build) did not compile `fusor::log` of a double
// (test/compile_check/unoptimised_avx512.cpp).
//
// Where GCC defines either macro, it is replaced here by the function GCC
// defines when optimising: the same builtin, the same signature. Included
// before xsimd (backend/cpu/simd.hpp), because xsimd's templates name the
// intrinsic where they are parsed: a program that includes xsimd before fusor
// (itself, or through xtensor with XTENSOR_USE_XSIMD) keeps the macros, and
// can include this header first. A GCC whose headers define functions
// there instead defines no macro, and this header then changes nothing; so
// does clang (its intrinsics are functions at every level).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512BW__)
#include <immintrin.h>

// (The names are the implementation's, reserved to it: redefined here only
// where the implementation's own definition is the broken macro.)
#ifdef _mm512_mask_blend_epi8
#undef _mm512_mask_blend_epi8
[[gnu::always_inline, gnu::artificial]] inline __m512i _mm512_mask_blend_epi8(__mmask64 u, __m512i a, __m512i w) {
  return reinterpret_cast<__m512i>(__builtin_ia32_blendmb_512_mask(reinterpret_cast<__v64qi>(a),
                                                                   reinterpret_cast<__v64qi>(w), u));
}
#endif

#ifdef _mm512_mask_blend_epi16
#undef _mm512_mask_blend_epi16
[[gnu::always_inline, gnu::artificial]] inline __m512i _mm512_mask_blend_epi16(__mmask32 u, __m512i a, __m512i w) {
  return reinterpret_cast<__m512i>(__builtin_ia32_blendmw_512_mask(reinterpret_cast<__v32hi>(a),
                                                                   reinterpret_cast<__v32hi>(w), u));
}
#endif

#endif
