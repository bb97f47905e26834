// The main of the GPU suite's doctest binaries: without a usable CUDA device
// the binary says why and exits 77 (meson's "skipped") before running any
// test, so a machine without a GPU never counts a device test as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>

#include <doctest/doctest.h>

#include <fusor/cuda.hpp>

int main(int argc, char** argv) {
  fusor::device_runtime* rt = fusor::current_device_runtime();
  if (!rt || rt->device_count() == 0) {
    std::printf("SKIPPED: no CUDA device: %s\n", rt ? rt->unavailable_reason().c_str() : "no CUDA runtime linked");
    return 77;
  }
  std::printf("running on %d device(s), %s\n", rt->device_count(), rt->name().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
