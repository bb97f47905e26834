// fusor/core/impl/collapse.ipp — merging a fused loop's axes (core/collapse.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/core/collapse.hpp"

namespace fusor {

FUSOR_RUNTIME loop_space collapse(const dims& shape, std::array<index_t, max_rank>* const* arrays,
                                  std::size_t count) {
  // Work from the innermost axis outwards, building groups of axes. A group's
  // strides are each array's stride along its innermost axis, `first[g]`: the
  // arrays are rewritten only at the end, in place (group g's axis is never
  // below g, so no stride is overwritten before it is read).
  std::array<std::size_t, max_rank> ext{}, first{};
  std::size_t groups = 0;
  for (std::size_t d = shape.rank(); d-- > 0;) {
    const std::size_t n = shape[d];
    if (n == 1) continue;
    bool join = groups > 0;
    if (join) {
      const std::size_t g = groups - 1;
      for (std::size_t k = 0; k < count && join; ++k)
        join = (*arrays[k])[d] == (*arrays[k])[first[g]] * static_cast<index_t>(ext[g]);
    }
    if (join) {
      ext[groups - 1] *= n;
    } else {
      ext[groups] = n;
      first[groups] = d;
      ++groups;
    }
  }
  loop_space out;
  if (groups == 0) {  // a single element
    out.rank = 1;
    out.extent[0] = 1;
    for (std::size_t k = 0; k < count; ++k) (*arrays[k])[0] = 0;
    return out;
  }
  out.rank = groups;
  for (std::size_t g = 0; g < groups; ++g) {
    out.extent[g] = ext[groups - 1 - g];
    for (std::size_t k = 0; k < count; ++k) (*arrays[k])[g] = (*arrays[k])[first[groups - 1 - g]];
  }
  return out;
}

}  // namespace fusor
