// test/fuzz/fuzz_loader.hpp — what both loader fuzzers check, whatever the
// bytes: a load either succeeds with a value that agrees with what read_npy /
// read_npz report, or throws a fusor::error and changes nothing (the
// variable's values and its buffer, by address). Any other outcome — a crash,
// a sanitizer report, another exception, a changed variable — stops the
// fuzzer with the input that caused it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <fusor/fusor.hpp>

namespace fuzz {

/// Stops the run: libFuzzer reports the input as a crash.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

/// The bytes as a file (the loaders read paths), one per process.
inline const std::filesystem::path& write_input(const std::uint8_t* data, std::size_t size, const char* suffix) {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("fusor-fuzz-" + std::to_string(::getpid()) + suffix);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) violated("cannot write the input file");
  return file;
}

/// A variable's observable state: its values (as bytes) and its buffer.
template <class T>
struct snapshot {
  std::vector<unsigned char> bytes;
  const void* address = nullptr;
  explicit snapshot(const fusor::shared<T>& s) {
    const auto a = s.get_value(fusor::borrow, fusor::internal_type);
    address = a.data();
    const auto* p = reinterpret_cast<const unsigned char*>(a.data());
    bytes.assign(p, p + a.bytes());
  }
  bool operator==(const snapshot&) const = default;
};

/// Runs `load`; a refusal must be a fusor::error that leaves every variable
/// in `vars` as it was. Returns whether the load succeeded.
template <class Load, class... T>
bool refused_load_changes_nothing(Load load, const fusor::shared<T>&... vars) {
  const auto before = std::make_tuple(snapshot<T>(vars)...);
  try {
    load();
    return true;
  } catch (const fusor::error&) {
    if (before != std::make_tuple(snapshot<T>(vars)...)) violated("a refused load changed a variable");
    return false;
  } catch (...) {
    violated("a load threw something other than a fusor::error");
  }
}

}  // namespace fuzz
