// fusor/compile/collective_step.hpp — a plan's communication step, prepared:
// what both backends run for a collective node (expr/collective.hpp).
//
// A backend gives the step host memory (the host's slots themselves; a
// device stages through host buffers) and the step calls its operation. The
// plan's first communication step also runs the call's agreement: the
// signature of every collective the plan runs (dtype and element count, in
// order), so that processes whose plans differ stop with an error naming
// the shapes instead of exchanging mismatched buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"

namespace fusor::detail {

struct collective_call {
  const collective_op* op = nullptr;
  const collective_table* table = nullptr;
  int src = -1, dest = -1;  ///< slots
  std::size_t count = 0;
  dtype type{};
  bool first = false;       ///< the plan's first communication step: it runs the agreement
  std::uint64_t signature = 0;
  std::string what;         ///< the plan's collectives in words (for a disagreement's message)

  /// Runs the operation on host memory.
  void run(const void* src_data, void* dest_data) const {
    if (first) {
      // Every group agrees, in the graph's order (the same on every process).
      table->agreed = true;
      table->for_each_group([&](const collective_op& o) { o.agree(true, signature, what); });
    }
    op->run(src_data, dest_data, count, type);
  }
};

/// The collective step `s` of plan `p`, prepared.
inline collective_call prepare_collective(const graph& g, const plan& p, const step_info& s) {
  collective_call c;
  const graph_node& n = g[s.node];
  c.op = g.collectives.ops[static_cast<std::size_t>(n.leaf)].get();
  c.table = &g.collectives;
  c.src = s.reads[0];
  c.dest = s.dest;
  c.count = p.shapes[static_cast<std::size_t>(s.node)].elements();
  c.type = n.type;
  // The signature: FNV-1a over (dtype, extents) of every collective, in plan order.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  bool seen = false;
  for (const step_info& other : p.steps) {
    if (other.kind != step_kind::communicate) continue;
    if (!seen) c.first = &other == &s;
    seen = true;
    const dims& shape = p.shapes[static_cast<std::size_t>(other.node)];
    mix(static_cast<std::uint64_t>(g[other.node].type));
    mix(shape.rank());
    for (std::size_t d = 0; d < shape.rank(); ++d) mix(shape[d]);
    c.what += (c.what.empty() ? "" : ", ") + g[other.node].text + " of " + std::string(name(g[other.node].type)) + " " +
              shape.str();
  }
  c.signature = h;
  return c;
}

}  // namespace fusor::detail
