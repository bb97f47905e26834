// fusor/memory/strided.hpp — moving elements between strided views of memory,
// whatever their dtype: the primitive behind concatenate, stack, roll and pad
// (compile/assemble.hpp), on the host and in the emulated device.
//
// A move copies the elements of one view into another of the same shape
// (source strides may be 0: a slab broadcast into a wider one), or fills a
// view with one value. Elements are moved as raw bytes of their size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fusor/core/config.hpp"

namespace fusor {

/// A strided view of a buffer, in elements: what a move reads or writes.
struct strided_view {
  int rank = 0;
  index_t extent[max_rank]{};
  index_t dst_strides[max_rank]{};
  index_t src_strides[max_rank]{};
  index_t dst_offset = 0, src_offset = 0;
  FUSOR_INLINE index_t elements() const noexcept {
    index_t n = 1;
    for (int d = 0; d < rank; ++d) n *= extent[d];
    return n;
  }
};

namespace detail {
/// dst[view] = src[view] (src null: every element = the `element_bytes`
/// bytes at `value`), on host memory.
inline void move_strided_host(void* dst, const void* src, const void* value, const strided_view& v,
                              std::size_t element_bytes) {
  const index_t n = v.elements();
  if (n == 0) return;
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  index_t idx[max_rank]{};
  for (index_t i = 0; i < n; ++i) {
    index_t to = v.dst_offset, from = v.src_offset;
    for (int a = 0; a < v.rank; ++a) {
      to += idx[a] * v.dst_strides[a];
      from += idx[a] * v.src_strides[a];
    }
    std::memcpy(d + static_cast<std::ptrdiff_t>(to) * static_cast<std::ptrdiff_t>(element_bytes),
                s ? s + static_cast<std::ptrdiff_t>(from) * static_cast<std::ptrdiff_t>(element_bytes)
                  : static_cast<const std::byte*>(value),
                element_bytes);
    for (int a = v.rank - 1; a >= 0; --a) {
      if (++idx[a] < v.extent[a]) break;
      idx[a] = 0;
    }
  }
}
}  // namespace detail

}  // namespace fusor
