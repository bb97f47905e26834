// test/replace_new.hpp — replaces every form of the global operator new and
// delete (plain, array, aligned, nothrow; fusor allocates its buffers with the
// aligned forms) by calls of one function the including test binary defines:
//
//   void* test_allocate(std::size_t bytes, std::size_t alignment) noexcept;
//
// which returns the memory (from malloc / aligned_alloc; alignment 0 means the
// default) or nullptr for an allocation that is to fail. Include it in exactly
// one translation unit of a test binary.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

void* test_allocate(std::size_t bytes, std::size_t alignment) noexcept;

namespace test_new {
/// malloc, or aligned_alloc for an over-aligned request (size rounded up to a
/// multiple of the alignment, as aligned_alloc requires).
inline void* system_allocate(std::size_t n, std::size_t align) noexcept {
  if (align <= alignof(std::max_align_t)) return std::malloc(n ? n : 1);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
inline void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace test_new

// new and delete are replaced together (malloc/free); GCC cannot see that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) { return test_new::or_throw(test_allocate(n, 0)); }
void* operator new[](std::size_t n) { return test_new::or_throw(test_allocate(n, 0)); }
void* operator new(std::size_t n, std::align_val_t a) {
  return test_new::or_throw(test_allocate(n, static_cast<std::size_t>(a)));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return test_new::or_throw(test_allocate(n, static_cast<std::size_t>(a)));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return test_allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return test_allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return test_allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return test_allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
