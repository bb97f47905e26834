// bench/language_ref.hpp — the hand-written loops of bench_language.cpp,
// compiled in their own TU (language_ref.cpp, with the reference-loop flags).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lref {

/// dst[k, :] = src[idx[k], :] for k < rows: one memcpy of `cols` floats per
/// row (no bounds check: the loop anyone writes when the indices are trusted).
void gather_rows(float* dst, const float* src, const std::int64_t* idx, std::size_t rows, std::size_t cols);

/// out[i] = fusor::fn::uniform_at{}(i, call, key, low, high) for i < n: the
/// generator fusor's draws call, in a plain loop over the same indices.
void uniform(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float low, float high);
void uniform(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double low, double high);

/// The same loop kept scalar (GCC's vectoriser off for it: -fno-tree-vectorize
/// as a function attribute). `uniform` above is vectorised by GCC (Philox's
/// 32 x 32 -> 64-bit multiplies in 512-bit registers); fusor evaluates a draw
/// one element at a time, so this is the loop of its kind.
void uniform_scalar(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float low, float high);
void uniform_scalar(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double low, double high);

/// out[i] = fusor::fn::normal_at{}(i, call, key, mean, std) for i < n.
void normal(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float mean, float std);
void normal(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double mean, double std);
// (normal is not vectorised by GCC either way: std::log and std::cos are libm calls.)

}  // namespace lref
