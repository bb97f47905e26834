// fusor/memory/array.hpp — fusor::array<E>, the internal storage object of a
// tensor shared variable: a reference-counted buffer plus a row-major shape.
//
// This is what `get_value(fusor::borrow, fusor::internal_type)` returns. It is
// a handle: copying it shares the buffer (O(1)); clone() deep-copies.
#pragma once

#include <algorithm>
#include <cstring>

#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/memory/buffer.hpp"

namespace fusor {

template <element E>
class array {
 public:
  using value_type = E;

  array() = default;
  array(buffer storage, const dims& shape) noexcept : buffer_(std::move(storage)), shape_(shape) {}

  /// Fresh fusor-owned storage for `shape`; contents uninitialised.
  static array allocate(const dims& shape, memory_space space = host) {
    if (!fits(shape, sizeof(E))) throw shape_error("fusor: cannot allocate an array of " + too_large(shape, dtype_of<E>));
    return array(buffer::allocate(shape.elements() * sizeof(E), space), shape);
  }

  /// Fresh storage holding a copy of `n = shape.elements()` elements at `src`.
  static array copy_of(const dims& shape, const E* src, memory_space space = host) {
    array a = allocate(shape, space);
    const std::size_t n = shape.elements();
    if (n) std::memcpy(a.mutable_data(), src, n * sizeof(E));
    return a;
  }

  const E* data() const noexcept { return reinterpret_cast<const E*>(buffer_.data()); }
  /// Writable pointer, for fusor's own kernels. User code reaches storage only
  /// through read-only views; writing through this bypasses the memory model.
  E* mutable_data() const noexcept { return reinterpret_cast<E*>(buffer_.data()); }

  const dims& shape() const noexcept { return shape_; }
  std::size_t rank() const noexcept { return shape_.rank(); }
  std::size_t size() const noexcept { return shape_.elements(); }
  std::size_t bytes() const noexcept { return size() * sizeof(E); }
  static constexpr fusor::dtype dtype() noexcept { return dtype_of<E>; }
  const memory_space& space() const noexcept { return buffer_.space(); }
  const fusor::buffer& storage() const noexcept { return buffer_; }

  /// A deep copy in fresh fusor-owned storage.
  array clone() const { return copy_of(shape_, data(), space()); }

 private:
  buffer buffer_;
  dims shape_;
};

}  // namespace fusor
