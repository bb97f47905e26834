// test/canary/sanitizer_canary.cpp — proof that a sanitizer build stops at its
// first report. Each mode commits one deliberate error that the matching
// sanitizer must turn into a failed run; run_canary.py passes only when the
// run stopped with the sanitizer's report and never reached the line after
// the error, so a sanitizer that only warns and carries on — UBSan's default
// — makes the suite fail.
//
//   sanitizer_canary signed-overflow   UBSan: INT_MAX + 1
//   sanitizer_canary float-cast        UBSan: 1e300 converted to int
//   sanitizer_canary misaligned        UBSan: a double read at an odd address
//   sanitizer_canary heap-overflow     ASan: one element past a heap array
//   sanitizer_canary stack-use-after-return  ASan: a local read after its function returned
//   sanitizer_canary data-race         TSan: two threads, one plain int
//   sanitizer_canary device-deref      ASan: host code reading (emulated) device memory
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

#include "fusor/memory/array.hpp"
#include "fusor/memory/emulated_device.hpp"

#include "../sanitizers/asan_options.hpp"

namespace {
volatile int sink = 0;

int signed_overflow() {
  volatile int big = INT_MAX;
  const int wrapped = big + 1;  // undefined: UBSan must stop here
  std::printf("no report: %d\n", wrapped);
  return 0;
}

int float_cast() {
  volatile double huge = 1e300;
  const int converted = static_cast<int>(huge);  // undefined: UBSan (float-cast-overflow) must stop here
  std::printf("no report: %d\n", converted);
  return 0;
}

/// The alignment check is left out of the symbolic layers only
/// (test/sanitizers/ubsan_ignorelist.txt): code that reads memory through a
/// pointer, as this does, keeps it.
int misaligned() {
  alignas(double) unsigned char bytes[2 * sizeof(double)] = {};
  const auto* odd = reinterpret_cast<const double*>(bytes + 1);
  sink = static_cast<int>(*odd);  // undefined: UBSan (alignment) must stop here
  std::printf("no report\n");
  return 0;
}

int heap_overflow() {
  int* p = new int[4];
  sink = p[4];  // one past the end: ASan must stop here
  delete[] p;
  std::printf("no report\n");
  return 0;
}

/// The address of a local, outliving its function (through a volatile
/// pointer, which the compiler does not follow, so it does not warn).
[[gnu::noinline]] const int* local_address() {
  int local = 42;
  int* volatile address = &local;
  sink = *address;
  return address;
}
int stack_use_after_return() {
  const int* dangling = local_address();
  sink = *dangling;  // the frame is gone: ASan (detect_stack_use_after_return) must stop here
  std::printf("no report\n");
  return 0;
}

int shared_counter = 0;
int data_race() {
  std::thread a([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;
  });
  std::thread b([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;
  });
  a.join();
  b.join();
  std::printf("no report: %d\n", shared_counter);
  return 0;
}
/// The bug a device backend must never have: a device pointer dereferenced
/// on the host. The emulation poisons its memory so that ASan reports it.
int device_deref() {
  fusor::emulated_devices devices;
  const auto a = fusor::array<double>::allocate(fusor::dims{4}, fusor::cuda(0));
  sink = static_cast<int>(a.data()[0]);  // device memory read by host code: ASan must stop here
  std::printf("no report\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "signed-overflow") == 0) return signed_overflow();
  if (argc == 2 && std::strcmp(argv[1], "float-cast") == 0) return float_cast();
  if (argc == 2 && std::strcmp(argv[1], "misaligned") == 0) return misaligned();
  if (argc == 2 && std::strcmp(argv[1], "heap-overflow") == 0) return heap_overflow();
  if (argc == 2 && std::strcmp(argv[1], "stack-use-after-return") == 0) return stack_use_after_return();
  if (argc == 2 && std::strcmp(argv[1], "data-race") == 0) return data_race();
  if (argc == 2 && std::strcmp(argv[1], "device-deref") == 0) return device_deref();
  std::printf("no report: unknown mode (usage: sanitizer_canary "
              "signed-overflow|float-cast|misaligned|heap-overflow|stack-use-after-return|data-race|"
              "device-deref)\n");
  return 0;
}
