// fusor/memory/impl/buffer.ipp — fusor-owned storage, on the host or a device (memory/buffer.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/memory/buffer.hpp"

namespace fusor {

FUSOR_RUNTIME buffer buffer::allocate(std::size_t bytes, memory_space space) {
  if (bytes > max_array_bytes)
    throw shape_error("fusor: cannot allocate " + std::to_string(bytes) +
                      " bytes: more than an array may hold (2^63 - 1 bytes)");
  if (!host_accessible(space)) return allocate_on_device(bytes, space);
  buffer b;
  void* p = nullptr;
  // If making the control block throws, the deleter runs: nothing leaks.
  if (bytes >= detail::huge_page_threshold) {
    const std::size_t n = (bytes + detail::huge_page_bytes - 1) / detail::huge_page_bytes * detail::huge_page_bytes;
    p = ::operator new(n, std::align_val_t{detail::huge_page_bytes});
    b.keep_ = std::shared_ptr<void>(p, detail::huge_delete{});
    detail::advise_huge_pages(p, n);
  } else {
    p = ::operator new(detail::padded_bytes(bytes), std::align_val_t{alignment});
    b.keep_ = std::shared_ptr<void>(p, detail::aligned_delete{});
  }
  b.data_ = static_cast<std::byte*>(p);
  b.bytes_ = bytes;
  b.space_ = space;
  b.how_ = ownership::owned;
  return b;
}

FUSOR_RUNTIME buffer buffer::allocate_on_device(std::size_t bytes, memory_space space) {
  device_runtime& rt = device_runtime_for(space);
  buffer b;
  b.space_ = space;
  b.how_ = ownership::owned;
  if (bytes == 0) return b;
  void* p = rt.allocate(space.device, bytes);
  // If making the control block throws, the deleter runs: nothing leaks.
  b.keep_ = std::shared_ptr<void>(p, detail::device_delete{&rt, space.device, bytes});
  b.data_ = static_cast<std::byte*>(p);
  b.bytes_ = bytes;
  return b;
}

}  // namespace fusor
