// bench/stencil_ref.hpp — the hand-written Jacobi loops of bench_stencil.cpp,
// compiled in their own TU (stencil_ref.cpp, with the reference-loop flags).
#pragma once

#include <cstddef>

namespace sref {

/// One Jacobi step over an n × n row-major grid: the interior of `dst` is the
/// mean of the four neighbours in `src`. The border of `dst` is not written:
/// the caller keeps the same border in both ping-pong buffers (preset once).
void jacobi(double* dst, const double* src, std::size_t n);

/// The same, and the border (rows 0 and n-1, columns 0 and n-1) copied from
/// `src` to `dst` every step: the work fusor's plan does (it copies the rest
/// of u into the spare buffer before writing the interior).
void jacobi_copy_border(double* dst, const double* src, std::size_t n);

}  // namespace sref
