// fusor/compile/moves.hpp — the steps that only move elements (the rest of a
// variable copied as boxes, a join's parts assembled), as the data both
// backends execute: read from the plan once, when a step is prepared.
#pragma once

#include <cstddef>
#include <vector>

#include "fusor/compile/plan.hpp"

namespace fusor::detail {

/// A copy step: boxes of slot `from` into slot `to`, both of shape `full`.
struct box_copy {
  int from = -1, to = -1;
  std::size_t element_bytes = 0;
  std::vector<box> boxes;
  dims full;
};
inline box_copy box_copy_of(const plan& p, const step_info& s) {
  const slot_info& dest = p.slots[static_cast<std::size_t>(s.dest)];
  return {s.reads[0], s.dest, size_of(dest.type), s.boxes, dest.shape};
}

/// An assemble step: moves into slot `to`, in order.
struct assembly {
  int to = -1;
  std::size_t element_bytes = 0;
  std::vector<step_info::move> moves;
};
inline assembly assembly_of(const plan& p, const step_info& s) {
  return {s.dest, size_of(p.slots[static_cast<std::size_t>(s.dest)].type), s.moves};
}

}  // namespace fusor::detail
