// test/fuzz/fuzz_npz.cpp — libFuzzer harness for the .npz loader.
//
// Every input is read with read_npz and loaded, all or nothing, into two
// variables named after the entries numpy's seeds hold ('w.npy', 'b.npy'),
// one permissive and one strict. A refused load must change neither variable;
// a successful one must give each exactly the shape read_npz reports.
#include <cstdint>

#include <fusor/io/npz.hpp>

#include "fuzz_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& file = fuzz::write_input(data, size, ".npz");

  std::map<std::string, fusor::npy_data> entries;
  bool readable = true;
  try {
    entries = fusor::read_npz(file);
    for (const auto& [name, e] : entries)
      if (e.bytes.size() != e.shape.elements() * fusor::size_of(e.type)) fuzz::violated("byte count != shape");
  } catch (const fusor::io_error&) {
    readable = false;
  } catch (...) {
    fuzz::violated("read_npz threw something other than an io_error");
  }

  auto w = fusor::shared(xt::xarray<double>{{1.0, 2.0}}, {.name = "w", .allow_downcast = true});
  auto b = fusor::shared(xt::xarray<float>{3.0f}, {.name = "b", .strict = true});
  const bool ok = fuzz::refused_load_changes_nothing([&] { fusor::load(file, w, b); }, w, b);
  if (ok) {
    // load reads the two entries it needs even when another entry is bad, so
    // it may succeed where read_npz (which reads every entry) refuses.
    if (readable) {
      if (!(w.shape() == entries.at("w").shape) || !(b.shape() == entries.at("b").shape))
        fuzz::violated("load: a shape differs from read_npz's");
    }
  }
  return 0;
}
