// test/fuzz/fuzz_npy.cpp — libFuzzer harness for the .npy loader.
//
// Every input is loaded four ways: read_npy (the raw reader), load<T> (a new
// variable), and load_into variables of two dtypes and casting policies. A
// successful read must be self-consistent (bytes == elements * item size, the
// shape within NumPy's limit); a successful load must hold exactly what
// read_npy read (converted with astype's rules); a refused one must change
// nothing (fuzz_loader.hpp).
#include <cstdint>
#include <cstring>

#include <fusor/io/npy.hpp>

#include "fuzz_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& file = fuzz::write_input(data, size, ".npy");

  fusor::npy_data raw;
  bool readable = true;
  try {
    raw = fusor::read_npy(file);
    if (raw.bytes.size() != raw.shape.elements() * fusor::size_of(raw.type)) fuzz::violated("byte count != shape");
    if (!fusor::fits(raw.shape, fusor::size_of(raw.type))) fuzz::violated("a shape beyond the limit was read");
  } catch (const fusor::io_error&) {
    readable = false;
  } catch (...) {
    fuzz::violated("read_npy threw something other than an io_error");
  }

  // Permissive: any rank, any dtype converted (allow_downcast).
  auto loose = fusor::shared(xt::xarray<double>{1.0, 2.0}, {.name = "loose", .allow_downcast = true});
  const bool loose_ok = fuzz::refused_load_changes_nothing([&] { fusor::load_into(loose, file); }, loose);
  if (loose_ok != readable && loose_ok) fuzz::violated("load_into accepted what read_npy refused");
  if (loose_ok) {
    const auto a = loose.get_value(fusor::borrow, fusor::internal_type);
    if (!(a.shape() == raw.shape)) fuzz::violated("load_into: shape differs from read_npy's");
    if (raw.type == fusor::dtype::float64 && a.bytes() && std::memcmp(a.data(), raw.bytes.data(), a.bytes()) != 0)
      fuzz::violated("load_into: values differ from read_npy's");
  }

  // Strict: only int32 of rank 2 with a broadcastable first axis.
  auto strict = fusor::shared(xt::xarray<std::int32_t>{{7, 8}},
                              {.name = "strict", .strict = true, .broadcastable = {true, false}});
  (void)fuzz::refused_load_changes_nothing([&] { fusor::load_into(strict, file); }, strict);

  // A new variable of a static rank.
  try {
    auto fresh = fusor::load<xt::xtensor<float, 1>>(file, {.allow_downcast = true});
    if (!readable || raw.shape.rank() != 1) fuzz::violated("load<T> accepted what it must refuse");
  } catch (const fusor::error&) {
  } catch (...) {
    fuzz::violated("load<T> threw something other than a fusor::error");
  }
  return 0;
}
