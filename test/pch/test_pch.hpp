// test/pch/test_pch.hpp — what almost every test unit includes, precompiled
// once per build (test/meson.build, option test_pch) and given to each unit
// with -include: doctest, fusor and the xtensor and standard headers the
// tests share. Parsing them is about 3.5 s of every unit's compile time.
//
// Only headers whose meaning no unit changes with a macro of its own: a
// unit that defines something before including fusor (FUSOR_CHECKED) is
// built without this header. (No include guard: it is the first thing a unit
// reads, once.)
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#if defined(__clang__) && !defined(FUSOR_SEPARATE_COMPILATION)
// Header-only under clang (the sanitizer build): the precompiled header's
// object holds the code of every inline function it defines, and of every
// template instantiated in it (-fpch-codegen, test/meson.build), and the
// units take it from there instead of compiling their own. Most of the
// run-time half is inline functions and gets there of itself; the kernels
// that depend on a dtype alone (an argument's conversion and upload, a
// matrix product), which libfusor holds in the compiled mode
// (runtime_convert_kernel, runtime_dot_kernel, runtime_upload_kernel: the
// same three, a fourth belongs in both places), are templates, which each
// unit would otherwise instantiate for each dtype its inputs
// have (about 750 functions in the expression tests' unit). Instantiated
// here, as libfusor does, for every dtype: the expression tests' unit then
// compiled in 11-15 % less time than in the compiled mode (two pairs side by
// side), where it had taken 16 % more.
namespace fusor_test_pch {
inline void instantiate_per_dtype_kernels() {
  for (int d = 0; d <= static_cast<int>(fusor::dtype::float64); ++d)
    fusor::visit(static_cast<fusor::dtype>(d), [](auto zero) {
      using T = decltype(zero);
      (void)fusor::cpu::convert_kernel_entry<T>();
      (void)fusor::cpu::dot_kernel_entry<T>();
      (void)fusor::gpu::upload_kernel_entry<T>();
    });
}
}  // namespace fusor_test_pch
#endif
