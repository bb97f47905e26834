// fusor/compile/collective_step.hpp — a plan's communication step, prepared:
// what both backends run for a collective node (expr/collective.hpp).
//
// A backend gives the step host memory (the host's slots themselves; a
// device stages through host buffers) and the step calls its operation.
//
// Where the processes of a plan with collectives agree (expr/collective.hpp;
// the program runs the agreements, compile/program.hpp): before the first
// step that communicates or writes a shared variable in place, with the
// signature of every collective the plan runs (dtype and shape, in order), so
// that processes whose plans differ stop with an error naming the shapes
// instead of exchanging mismatched buffers; again before such a step when a
// step that can fail at run time (an exponent's check, a gather's or a
// scatter's index check) ran since the last agreement; and after the last
// step (before the commit) when such a step follows the last agreement. A
// process that fails between two agreements meets the others at the next one
// (from its error path), so none waits forever, and none writes or commits
// anything of a call another process failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"

namespace fusor::detail {

/// Whether a step can fail at run time (after the plan was built and bound).
inline bool may_fail(step_kind k) noexcept {
  return k == step_kind::check || k == step_kind::gather || k == step_kind::scatter;
}

/// Whether a step writes memory the caller sees before the call's commit: a
/// shared variable updated in place (a fused loop, or BLAS accumulating), or
/// an output written into a lent input.
inline bool writes_in_place(const step_info& s) noexcept {
  return ((s.kind == step_kind::update || s.kind == step_kind::output) && s.in_place) ||
         (s.kind == step_kind::dot && s.accumulate);
}

/// Where a plan's processes agree (above), its signature, and the same in words.
struct agreement_points {
  std::vector<char> before;  ///< per step: the processes agree before it runs (empty: no collectives)
  bool at_end = false;       ///< ... and after the last step
  std::size_t last = 0;      ///< the last step agreed before
  std::uint64_t signature = 0;
  std::string what;
  /// Whether another agreement follows the one before step i (i = the step
  /// count: the one after the last step, which none follows).
  bool again_after(std::size_t i) const noexcept { return i < last || (at_end && i < before.size()); }
};

inline agreement_points agreements_of(const graph& g, const plan& p) {
  agreement_points a;
  a.before.assign(p.steps.size(), 0);
  bool collectives = false;
  bool pending = true;  // a failure possible since the last agreement (the call's own start counts)
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over (dtype, extents) of every collective, in plan order
  auto mix = [&](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const step_info& s = p.steps[i];
    if (pending && (s.kind == step_kind::communicate || writes_in_place(s))) {
      a.before[i] = 1;
      a.last = i;
      pending = false;
    }
    if (may_fail(s.kind)) pending = true;
    if (s.kind != step_kind::communicate) continue;
    collectives = true;
    const dims& shape = p.shapes[static_cast<std::size_t>(s.node)];
    mix(static_cast<std::uint64_t>(g[s.node].type));
    const collective_op& op = *g.collectives.ops[static_cast<std::size_t>(g[s.node].leaf)];
    mix(shape.rank());
    for (std::size_t d = 0; d < shape.rank(); ++d) mix(op.same_extent_everywhere(d) ? shape[d] : ~std::uint64_t{0});
    a.what += (a.what.empty() ? "" : ", ") + g[s.node].text + " of " + std::string(name(g[s.node].type)) + " " +
              shape.str();
  }
  if (!collectives) return agreement_points{};
  a.at_end = pending;
  a.signature = h;
  return a;
}

/// A communication step, prepared: the operation over host memory.
struct collective_call {
  const collective_op* op = nullptr;
  int src = -1, dest = -1;  ///< slots
  dims shape;
  dtype type{};
  std::size_t bytes() const noexcept { return shape.elements() * size_of(type); }
  void run(const void* src_data, void* dest_data) const { op->run(src_data, dest_data, shape, type); }
};

/// The collective step `s` of plan `p`, prepared.
inline collective_call prepare_collective(const graph& g, const plan& p, const step_info& s) {
  collective_call c;
  const graph_node& n = g[s.node];
  c.op = g.collectives.ops[static_cast<std::size_t>(n.leaf)].get();
  c.src = s.reads[0];
  c.dest = s.dest;
  c.shape = p.shapes[static_cast<std::size_t>(s.node)];
  c.type = n.type;
  return c;
}

/// A communication step as a backend runs it: one collective, or several of
/// one kind that the plan sends as one message (step_info::message_steps),
/// their operands packed side by side into a host staging buffer sized here
/// (a call allocates nothing), combined by one operation, unpacked into each
/// result. A backend whose slots are not host memory stages even one.
struct collective_message {
  std::vector<collective_call> calls;  ///< empty: an earlier step's message carries this step
  std::vector<std::byte> staging;      ///< empty: one call, run on the slots themselves
  std::size_t elements = 0;

  /// Runs the message: `copy_in(to, slot, bytes)` and `copy_out(slot, from,
  /// bytes)` move an operand into the staging buffer and a result out of it.
  template <class CopyIn, class CopyOut>
  void run(void* const* slots, CopyIn&& copy_in, CopyOut&& copy_out) {
    if (calls.empty()) return;
    if (staging.empty()) {
      calls[0].run(slots[calls[0].src], slots[calls[0].dest]);
      return;
    }
    std::size_t at = 0;
    for (const collective_call& c : calls) {
      copy_in(staging.data() + at, c.src, c.bytes());
      at += c.bytes();
    }
    calls[0].op->run(staging.data(), staging.data(), dims{elements}, calls[0].type);
    at = 0;
    for (const collective_call& c : calls) {
      copy_out(c.dest, staging.data() + at, c.bytes());
      at += c.bytes();
    }
  }
};

/// The message of communication step `s` of plan `p` (`staged`: always
/// through the staging buffer).
inline collective_message prepare_message(const graph& g, const plan& p, const step_info& s, bool staged) {
  collective_message m;
  if (s.message_steps == 0) return m;
  const auto first = static_cast<std::size_t>(&s - p.steps.data());
  std::size_t bytes = 0;
  for (int k = 0; k < s.message_steps; ++k) {
    m.calls.push_back(prepare_collective(g, p, p.steps[first + static_cast<std::size_t>(k)]));
    m.elements += m.calls.back().shape.elements();
    bytes += m.calls.back().bytes();
  }
  if (staged || m.calls.size() > 1) m.staging.resize(bytes);
  return m;
}

}  // namespace fusor::detail
