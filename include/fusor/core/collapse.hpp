// fusor/core/collapse.hpp — the iteration space of a fused loop: axes that
// every operand traverses alike merged into one, length-1 axes dropped. Used
// by the host loops and by the device kernels' lowering alike. Portable.
#pragma once

#include <array>
#include <cstddef>

#include "fusor/core/dims.hpp"

namespace fusor {

/// The iteration space after merging axes: `rank` extents, and per array the
/// strides along them (written back into the arrays' own stride storage).
struct loop_space {
  std::size_t rank = 0;
  std::array<std::size_t, max_rank> extent{};
};

/// Merges axes of `shape` that every stride array traverses as one, drops
/// length-1 axes, and rewrites each array's strides to the merged space.
/// `arrays`: `count` pointers to the arrays' strides (one function for every
/// count: it runs once per plan).
FUSOR_RUNTIME loop_space collapse(const dims& shape, std::array<index_t, max_rank>* const* arrays, std::size_t count);

template <std::size_t K>
loop_space collapse(const dims& shape, const std::array<std::array<index_t, max_rank>*, K>& arrays) {
  return collapse(shape, arrays.data(), K);
}

/// Odometer over the outer axes (all but the innermost) of a loop space.
template <class Body>
void for_each_row(const loop_space& s, Body&& body) {
  std::array<index_t, max_rank> idx{};
  const std::size_t outer = s.rank - 1;
  for (;;) {
    body(idx.data(), outer);
    std::size_t d = outer;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++idx[d] < static_cast<index_t>(s.extent[d])) break;
      idx[d] = 0;
    }
  }
}

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/core/impl/collapse.ipp"
#endif
