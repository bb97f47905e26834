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
template <std::size_t K>
loop_space collapse(const dims& shape, const std::array<std::array<index_t, max_rank>*, K>& arrays) {
  loop_space out;
  // Work from the innermost axis outwards, building groups.
  std::array<std::size_t, max_rank> ext{};
  std::array<std::array<index_t, max_rank>, K> merged{};
  std::size_t groups = 0;
  for (std::size_t d = shape.rank(); d-- > 0;) {
    const std::size_t n = shape[d];
    if (n == 1) continue;
    bool join = groups > 0;
    if (join) {
      const std::size_t g = groups - 1;
      for (std::size_t k = 0; k < K && join; ++k)
        join = (*arrays[k])[d] == merged[k][g] * static_cast<index_t>(ext[g]);
    }
    if (join) {
      ext[groups - 1] *= n;
    } else {
      ext[groups] = n;
      for (std::size_t k = 0; k < K; ++k) merged[k][groups] = (*arrays[k])[d];
      ++groups;
    }
  }
  if (groups == 0) {  // a single element
    ext[0] = 1;
    for (std::size_t k = 0; k < K; ++k) merged[k][0] = 0;
    groups = 1;
  }
  out.rank = groups;
  for (std::size_t g = 0; g < groups; ++g) {
    out.extent[g] = ext[groups - 1 - g];
    for (std::size_t k = 0; k < K; ++k) (*arrays[k])[g] = merged[k][groups - 1 - g];
  }
  return out;
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
