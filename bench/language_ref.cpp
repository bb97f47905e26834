// bench/language_ref.cpp — hand-written loops for bench_language.cpp, in their
// own TU (built with -mprefer-vector-width=512
// -fno-tree-loop-distribute-patterns, like function_ref.cpp) so they are not
// inlined into the benchmark.
#include "language_ref.hpp"

#include <cstring>

#include <fusor/random/philox.hpp>

namespace lref {

void gather_rows(float* dst, const float* src, const std::int64_t* idx, std::size_t rows, std::size_t cols) {
  for (std::size_t k = 0; k < rows; ++k)
    std::memcpy(dst + k * cols, src + static_cast<std::size_t>(idx[k]) * cols, cols * sizeof(float));
}

namespace {
template <class F, class T>
void generate(T* __restrict out, std::size_t n, std::uint64_t call, std::uint64_t key, T a, T b) {
  for (std::size_t i = 0; i < n; ++i) out[i] = F{}(static_cast<std::int64_t>(i), call, key, a, b);
}
template <class F, class T>
__attribute__((optimize("no-tree-vectorize"))) void generate_scalar(T* __restrict out, std::size_t n,
                                                                     std::uint64_t call, std::uint64_t key, T a, T b) {
  for (std::size_t i = 0; i < n; ++i) out[i] = F{}(static_cast<std::int64_t>(i), call, key, a, b);
}
}  // namespace

void uniform(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float low, float high) {
  generate<fusor::fn::uniform_at>(out, n, call, key, low, high);
}
void uniform(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double low, double high) {
  generate<fusor::fn::uniform_at>(out, n, call, key, low, high);
}
void uniform_scalar(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float low, float high) {
  generate_scalar<fusor::fn::uniform_at>(out, n, call, key, low, high);
}
void uniform_scalar(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double low, double high) {
  generate_scalar<fusor::fn::uniform_at>(out, n, call, key, low, high);
}
void normal(float* out, std::size_t n, std::uint64_t call, std::uint64_t key, float mean, float std) {
  generate<fusor::fn::normal_at>(out, n, call, key, mean, std);
}
void normal(double* out, std::size_t n, std::uint64_t call, std::uint64_t key, double mean, double std) {
  generate<fusor::fn::normal_at>(out, n, call, key, mean, std);
}

}  // namespace lref
