// fusor/memory/buffer.hpp — a reference-counted span of bytes in a memory
// space. Three kinds: owned by fusor (64-byte aligned), borrowed from the user
// (not owned; the caller keeps it alive), or adopted from a moved-in user
// object (the object is kept alive with the buffer).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/memory/device.hpp"
#include "fusor/memory/space.hpp"

namespace fusor {

enum class ownership : unsigned char {
  owned,     ///< allocated by fusor, aligned to fusor::alignment
  borrowed,  ///< the user's memory; its lifetime is the user's
  adopted,   ///< the user's object was moved in and is kept alive here
};

namespace detail {
/// One address per type: identifies the type of an adopted object without RTTI.
template <class T>
inline constexpr char type_tag = 0;

/// fusor allocates through the global aligned operator new, so that a program
/// that replaces it (to count, pool or fail allocations) sees every byte
/// fusor takes, and an out-of-memory is std::bad_alloc.
struct aligned_delete {
  void operator()(void* p) const noexcept { ::operator delete(p, std::align_val_t{alignment}); }
};

/// Buffers of this size and more are aligned to 2 MiB and backed by
/// transparent huge pages where the kernel offers them (as NumPy does for
/// arrays of 4 MiB and more): a 512 MiB array then costs 256 page faults at
/// first touch instead of 131 072, and far fewer TLB misses afterwards.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
inline constexpr std::size_t huge_page_threshold = std::size_t{4} << 20;

struct huge_delete {
  void operator()(void* p) const noexcept { ::operator delete(p, std::align_val_t{huge_page_bytes}); }
};

/// Gives device memory back to the runtime that allocated it.
struct device_delete {
  device_runtime* runtime;
  int device;
  std::size_t bytes;
  void operator()(void* p) const noexcept { runtime->deallocate(device, p, bytes); }
};

/// A hint: where transparent huge pages are off or unknown it does nothing.
inline void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
#endif
}

/// Rounds a request up to whole cache lines: the padding lets a SIMD loop
/// finish without a scalar tail on fusor-owned memory.
constexpr std::size_t padded_bytes(std::size_t bytes) noexcept {
  const std::size_t n = bytes == 0 ? alignment : bytes;
  return (n + alignment - 1) / alignment * alignment;
}
}  // namespace detail

class buffer {
 public:
  buffer() noexcept = default;

  /// Fresh fusor-owned storage of at least `bytes`, aligned to
  /// fusor::alignment on the host and 256 bytes on a device. Contents are
  /// uninitialised.
  FUSOR_RUNTIME static buffer allocate(std::size_t bytes, memory_space space = host);

  /// Device memory from the space's runtime (an empty buffer holds none).
  FUSOR_RUNTIME static buffer allocate_on_device(std::size_t bytes, memory_space space);

  /// The user's memory, not owned: the caller guarantees it outlives every use.
  static buffer borrow(void* p, std::size_t bytes, memory_space space = host) noexcept {
    buffer b;
    b.data_ = static_cast<std::byte*>(p);
    b.bytes_ = bytes;
    b.space_ = space;
    b.how_ = ownership::borrowed;
    return b;
  }

  /// Takes ownership of a user object (an xt::xarray moved in, say) and uses
  /// the bytes that `locate(object)` points at. O(1): the elements do not move.
  template <class Object, class Locate>
  static buffer adopt(Object&& object, Locate locate, std::size_t bytes) {
    auto holder = std::make_shared<std::decay_t<Object>>(std::forward<Object>(object));
    buffer b;
    b.data_ = static_cast<std::byte*>(static_cast<void*>(locate(*holder)));
    b.keep_ = std::move(holder);
    b.adopted_type_ = &detail::type_tag<std::decay_t<Object>>;
    b.bytes_ = bytes;
    b.space_ = host;
    b.how_ = ownership::adopted;
    return b;
  }

  std::byte* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  const memory_space& space() const noexcept { return space_; }
  ownership how() const noexcept { return how_; }
  explicit operator bool() const noexcept { return data_ != nullptr || how_ == ownership::owned; }

  /// Number of handles sharing this storage (0 for borrowed memory, which
  /// fusor does not count).
  long use_count() const noexcept { return keep_.use_count(); }

  /// The adopted object, if this buffer adopted one of exactly type Object
  /// (null for any other type: the cast is checked).
  template <class Object>
  std::shared_ptr<Object> adopted_object() const noexcept {
    if (how_ != ownership::adopted || adopted_type_ != &detail::type_tag<Object>) return nullptr;
    return std::static_pointer_cast<Object>(keep_);
  }

  /// Whether [p, p + n) and this buffer's bytes share at least one byte
  /// (Kokkos' deep_copy overlap test). Empty ranges overlap nothing.
  bool overlaps(const void* p, std::size_t n) const noexcept {
    if (n == 0 || bytes_ == 0 || data_ == nullptr) return false;
    const auto* b = static_cast<const std::byte*>(p);
    return b < data_ + bytes_ && data_ < b + n;
  }

 private:
  std::shared_ptr<void> keep_;
  const char* adopted_type_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  memory_space space_{};
  ownership how_ = ownership::owned;
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/memory/impl/buffer.ipp"
#endif
