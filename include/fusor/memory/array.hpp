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
#include "fusor/memory/device.hpp"

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

  /// Fresh storage in `space` holding a copy of the `shape.elements()`
  /// elements at `src`, which lives in `from`.
  static array copy_of(const dims& shape, const E* src, memory_space space = host, memory_space from = host) {
    array a = allocate(shape, space);
    const std::size_t n = shape.elements();
    if (n) copy_bytes(a.mutable_data(), space, src, from, n * sizeof(E));
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

  /// A deep copy in fresh fusor-owned storage, in the same space.
  array clone() const { return copy_of(shape_, data(), space(), space()); }
  /// A deep copy in another space (host <-> device).
  array to(memory_space s) const { return copy_of(shape_, data(), s, space()); }
  /// Whether host code may read the elements through data().
  bool on_host() const noexcept { return host_accessible(space()); }

 private:
  buffer buffer_;
  dims shape_;
};

}  // namespace fusor
