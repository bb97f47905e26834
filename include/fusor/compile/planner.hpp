// fusor/compile/planner.hpp — builds a plan from a graph and one call's facts.
//
// Fusion: elementwise nodes (map, cast, constants, iota) are always fused into the
// kernel that reads them; every other node is computed into memory once and
// read from there — a reduction fused with its operand, a dot product, a
// compound operand of a dot / transpose / reshape materialised — or is a view
// of memory (an input, a shared variable, a transpose, a reshape). Because the
// graph has one node per distinct sub-expression, a reduction, a dot or a
// materialised operand needed twice is computed once.
//
// Order: exponent checks and conversions and temporaries first (each just
// before the first step that needs it), then the outputs (one fused pass for
// those of one shape), the updates and candidate outputs not written in place
// (into buffers no caller can see), and last the in-place writes, which thus
// run after every other reader of the buffers they overwrite. Everything that
// can fail happens before the first in-place write.
//
// In place (the memory model's properties a–e): an update is written into its
// variable's buffer, and a borrowed elementwise output into a lent input's
// buffer (R47), only when
//   - the buffer holds exactly the result's shape and dtype, and no view the
//     caller holds shares it;
//   - every read of that buffer by the kernel is at the index being written
//     (same buffer, same layout: an elementwise read), and partial overlaps
//     with any argument are excluded;
//   - no other in-place write targets or reads it, and it reads no other
//     in-place target.
// Temporaries get byte offsets in one arena, reusing the bytes of those whose
// last reader has run (first fit, 64-byte aligned).
#pragma once

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/core/config.hpp"

namespace fusor {

/// Builds the plan of `g` for the facts of one call (defined in
/// compile/impl/planner.ipp: compiled once into libfusor under
/// FUSOR_SEPARATE_COMPILATION, inline otherwise).
FUSOR_RUNTIME plan make_plan(const graph& g, const call_facts& f);

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/planner.ipp"
#endif
