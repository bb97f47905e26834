// Compiled (syntax only: it need not run here) by the test
// `unoptimised_avx512` (test/meson.build) with g++ at -O0 for a CPU with
// AVX-512BW, whatever the machine: a debug build on such a CPU. xsimd's
// logarithm of doubles selects among int64 batches, and its integer select
// names GCC's masked byte and word blends for every width (a switch over the
// element size, every case compiled); without optimisation those are macros
// that do not accept xsimd's batches (backend/cpu/unoptimised_blends.hpp
// replaces them). Without that header this unit fails with "invalid cast from
// type 'const xsimd::batch<long int, xsimd::avx512bw>' to type '__v64qi'".
// The selections of every lane type are here too.
#include <fusor/fusor.hpp>

#include <cstdint>

#if !defined(__AVX512BW__) || defined(__OPTIMIZE__)
#error "this check is meant for -O0 with AVX-512BW (test/meson.build gives the flags)"
#endif

template <class T>
auto selected(const fusor::vector<T>& x) {
  return fusor::where(x > T(1), x, x + T(2));
}

int main() {
  fusor::vector<std::int32_t> i32{"i32"};
  fusor::vector<std::uint32_t> u32{"u32"};
  fusor::vector<std::int64_t> i64{"i64"};
  fusor::vector<std::uint64_t> u64{"u64"};
  fusor::vector<float> f32{"f32"};
  fusor::vector<double> f64{"f64"};
  auto f = fusor::function(fusor::inputs(i32, u32, i64, u64, f32, f64),
                           fusor::outputs(selected(i32), selected(u32), selected(i64), selected(u64), selected(f32),
                                          selected(f64), fusor::log(f64), fusor::log(f32)));
  return sizeof(f) == 0;
}
