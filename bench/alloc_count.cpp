// bench/alloc_count.cpp — replaces the global operator new/delete with versions
// that count calls of operator new, so that the benchmarks can report how many
// heap allocations one evaluation makes through new (shared_ptr control
// blocks, std::vector, std::string..., and fusor's own 64-byte-aligned buffers,
// which it allocates with the aligned operator new).
// A separate translation unit, so that the compiler never sees a `new` paired
// with the free() below. The suite is single-threaded: a plain counter.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "alloc_count.hpp"

namespace {
std::size_t g_news = 0;
}

std::size_t bench_operator_new_calls() noexcept { return g_news; }

void* operator new(std::size_t n) {
  ++g_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  ++g_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  ++g_news;
  const auto align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
