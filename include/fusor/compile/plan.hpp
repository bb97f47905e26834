// fusor/compile/plan.hpp — the plan: what a call runs, as data.
//
// A plan is built from a graph and the facts of one call (shapes, dtypes, which
// buffers alias which) and is valid for every later call with the same facts
// (its signature). It lists:
//   - slots: every value that lives in memory — the inputs, the shared
//     variables, the temporaries (with byte offsets in one arena, reused
//     according to liveness), the outputs and the spare buffers of updates;
//   - for every node, how its value is read (a slot and a strided view), or
//     that it is fused into its consumers;
//   - steps, in order: exponent checks, input conversions, temporaries
//     (reductions fused with their operand, dot products, materialised
//     operands), the outputs (one fused pass where they share a shape), the
//     updates not written in place, then the in-place writes, then the
//     installs and buffer transfers of the commit;
//   - the in-place decisions, each with its reason.
// A backend executes the steps with its own kernels; it decides nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/region.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/memory/strided.hpp"
#include "fusor/shared/strided_argument.hpp"

namespace fusor {

enum class slot_kind : std::uint8_t { input, shared, temporary, output, spare };

struct slot_info {
  slot_kind kind{};
  dtype type{};
  dims shape;
  int owner = -1;            ///< input, shared, output or update index
  std::size_t offset = 0;    ///< temporary: byte offset in the arena
  std::size_t bytes = 0;
  int first = -1;            ///< temporary: the step that writes it
  int last = -1;             ///< temporary: the last step that reads it
};

/// How a node's value is read: a slot and a strided view of it, or nothing
/// (slot -1: the node is fused into whatever reads it).
struct node_value {
  int slot = -1;
  dims shape;
  std::array<index_t, max_rank> strides{};  ///< element strides of the view
  index_t offset = 0;                         ///< elements from the slot's start to the view's first element
  bool contiguous() const noexcept {
    const auto c = c_strides(shape);
    for (std::size_t d = 0; d < shape.rank(); ++d)
      if (shape[d] != 1 && strides[d] != c[d]) return false;
    return true;
  }
};

enum class step_kind : std::uint8_t {
  check,        ///< refuse a negative integer exponent (throws; runs before any write)
  convert,      ///< an argument of another dtype, converted into a temporary
  upload,       ///< a host argument of a function on a device, copied (and converted) into a temporary
  reduce,       ///< a reduction fused with its operand, into a temporary
  dot,          ///< a dot product, into a temporary
  materialize,  ///< a compound operand (of a dot, a transpose, a reshape), or a kept reference's target
                ///< (expr/fusion.hpp), into a temporary
  outputs,      ///< several outputs of one shape in one fused pass
  output,       ///< one output (fused group), into its buffer or, in place, a lent input's
  update,       ///< one update (fused group), into its spare buffer or, in place, the variable's
  copy,         ///< an update of a view into a spare buffer: the rest of the variable copied there first
  assemble,     ///< a join (concatenate, roll, pad): its parts moved into a temporary
  gather,       ///< take: the indexed slabs of an operand copied into a temporary (indices checked first)
  scatter,      ///< a gradient of take: zeros, then the adjoint's slabs added at the indexed rows
  communicate,  ///< a collective (expr/collective.hpp): its operand combined over processes, into a temporary
  install,      ///< commit: the spare buffer becomes the variable's value (ping-pong)
  transfer,     ///< commit: another updated variable's old buffer becomes this one's value
};

struct step_info {
  step_kind kind{};
  int node = -1;        ///< the node computed (check: the exponent; convert: the input's node)
  int dest = -1;        ///< the slot written
  int target = -1;      ///< output / update index (install, transfer: update index)
  int source = -1;      ///< transfer: the update whose variable gives its buffer; reduce: the node
                        ///< whose temporary holds the operand's value (-1: the operand, fused)
  int scratch = -1;     ///< reduce: a scratch slot (nanmean's counts, argmax's best values)
  bool in_place = false;
  /// dot: dest = alpha * a . b, plus dest's own value when `accumulate` (an
  /// in-place update v - c * dot(a, b): alpha = -c, one BLAS call).
  double alpha = 1.0;
  bool accumulate = false;
  /// outputs: (node, dest slot, output index) per output of the pass
  std::vector<std::array<int, 3>> group;
  /// An update of a view: the part of `dest` written (its slot is dest; the
  /// step's shape is the region's). Slot -1: all of dest, contiguous.
  node_value region;
  /// copy: the boxes copied from reads[0] into dest (both of dest's shape).
  std::vector<box> boxes;
  /// assemble: moves into dest, in order — from a slot's view, or (slot -1)
  /// a fill with the value's bits.
  struct move {
    int from = -1;
    strided_view view;
    std::uint64_t fill = 0;
  };
  std::vector<move> moves;
  /// communicate: how many communication steps, from this one on, go as this
  /// step's one message (several small allreduces of one kind, fused); 0: an
  /// earlier step's message carries this one.
  int message_steps = 1;
  std::vector<int> reads;  ///< the slots the step reads
  double bytes = 0;        ///< bytes read and written, STREAM-counted (for the profile)
  std::string label;       ///< what the profile and f.plan() call it

  /// Whether a call runs a kernel for this step: not the commit's installs
  /// and transfers, nor a communication an earlier step's message carries.
  /// (These are the steps a profile times and its trace records.)
  bool runs_kernel() const noexcept {
    return kind != step_kind::install && kind != step_kind::transfer &&
           !(kind == step_kind::communicate && message_steps == 0);
  }
};

/// How an update is written.
struct update_plan {
  bool in_place = false;
  bool partial = false;     ///< an update of a view: `shape` is the variable's, `region` the part written
  node_value region;
  int transfer_from = -1;   ///< the update whose variable's old buffer this one takes
  bool transfer_source = false;
  int spare = -1;           ///< the spare slot written when not in place
  dims shape;
  std::string why;          ///< the reason of the decision, for f.plan()
};

/// How an output is written.
struct output_plan {
  int slot = -1;            ///< the output slot (or, in place, the lent input's slot)
  bool in_place = false;
  int input = -1;           ///< in place: the input whose buffer it is (R47)
  dims shape;
  std::string why;
};

/// The facts of one argument of one call.
struct input_facts {
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  dims shape;
  dtype source{};
  /// Lent with In(x, borrow) as a non-const lvalue of the input's dtype, and
  /// overlapping no other argument: the function may write it.
  bool writable = false;
  /// Where the argument's elements are (a fusor::array may be on a device).
  memory_space space = host;
  /// A strided argument (an xtensor view): `data` is the lowest address of
  /// the span it covers (`bytes` long), its elements at the layout's strides.
  strided_layout layout{};
};

/// Everything a plan depends on, read at each call.
struct call_facts {
  std::vector<input_facts> inputs;   ///< per graph input
  std::vector<shared_facts> shared;  ///< per graph shared variable
  /// Where the call runs: the host, or a device (its values in `space`).
  backend_id backend = backend_id::host;
  memory_space space = host;
};

/// How two buffers relate (only argument pairs, and argument / shared
/// variable pairs, can: shared variables never share bytes).
enum class overlap : std::uint8_t { none, same, partial };

inline overlap relation(const std::byte* a, std::size_t na, const std::byte* b, std::size_t nb) noexcept {
  if (na == 0 || nb == 0 || !(a < b + nb && b < a + na)) return overlap::none;
  return a == b && na == nb ? overlap::same : overlap::partial;
}

/// What a plan was built for. A call whose facts match reuses the plan.
class signature {
 public:
  signature() = default;
  explicit signature(const call_facts& f) { record(f); }

  bool matches(const call_facts& f) const noexcept {
    if (f.inputs.size() != inputs_.size() || f.shared.size() != shared_.size()) return false;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const auto& a = f.inputs[i];
      const auto& b = inputs_[i];
      if (!(a.shape == b.shape) || a.source != b.source || a.writable != b.writable || a.space != b.space ||
          !(a.layout == b.layout))
        return false;
    }
    for (std::size_t i = 0; i < shared_.size(); ++i) {
      const auto& a = f.shared[i];
      const auto& b = shared_[i];
      if (a.has_value != b.has_value || a.viewed != b.viewed || a.borrowed_storage != b.borrowed_storage ||
          (a.has_value && !(*a.shape == b.shape)))
        return false;
    }
    std::size_t k = 0;
    bool same = true;
    for_each_pair(f, [&](overlap o) { same = same && k < overlaps_.size() && overlaps_[k++] == o; });
    return same && k == overlaps_.size();
  }

 private:
  struct input_key {
    dims shape;
    dtype source{};
    bool writable = false;
    memory_space space = host;
    strided_layout layout{};
  };
  struct shared_key {
    dims shape;
    bool has_value = false, viewed = false, borrowed_storage = false;
  };

  void record(const call_facts& f) {
    for (const auto& a : f.inputs) inputs_.push_back({a.shape, a.source, a.writable, a.space, a.layout});
    for (const auto& s : f.shared)
      shared_.push_back({s.has_value ? *s.shape : dims{}, s.has_value, s.viewed, s.borrowed_storage});
    for_each_pair(f, [&](overlap o) { overlaps_.push_back(o); });
  }

  /// Every argument against every later argument and every shared variable.
  template <class F>
  static void for_each_pair(const call_facts& f, F&& fn) {
    for (std::size_t i = 0; i < f.inputs.size(); ++i) {
      const auto& a = f.inputs[i];
      for (std::size_t j = i + 1; j < f.inputs.size(); ++j)
        fn(relation(a.data, a.bytes, f.inputs[j].data, f.inputs[j].bytes));
      for (const auto& s : f.shared) fn(relation(a.data, a.bytes, s.data, s.bytes));
    }
  }

  std::vector<input_key> inputs_;
  std::vector<shared_key> shared_;
  std::vector<overlap> overlaps_;
};

/// The plan of a graph for one signature.
struct plan {
  signature sig;
  /// Where it runs: the host, or a device (every slot but the host
  /// arguments of upload steps is in `space`).
  backend_id backend = backend_id::host;
  memory_space space = host;
  std::vector<dims> shapes;          ///< per node
  std::vector<node_value> values;    ///< per node
  std::vector<slot_info> slots;
  std::vector<int> input_slot;       ///< per graph input: its own slot
  std::vector<int> shared_slot;      ///< per graph shared variable
  std::vector<int> output_slot;      ///< per output: its own buffer's slot
  std::vector<step_info> steps;
  std::vector<update_plan> updates;
  std::vector<output_plan> outputs;
  std::size_t arena_bytes = 0;

  /// A readable listing: the shapes it was built for, the steps with the
  /// slots they read and write, the arena, and every in-place decision with
  /// its reason.
  std::string str(const graph& g) const;
  /// The plan as a Graphviz graph, for `dot -Tsvg`: its steps in order, the
  /// slots each reads and writes — arguments, shared variables (read, updated
  /// in place or through a spare buffer), temporaries with their arena bytes
  /// and the steps they live over, outputs — the installs and buffer
  /// transfers of the commit, the copies between the host and a device, and
  /// the communication steps. A step's label is its line of str(), cut after
  /// a few lines; the whole line is its tooltip.
  std::string dot(const graph& g) const;
};

namespace detail {
inline const char* kind_name(step_kind k) noexcept {
  switch (k) {
    case step_kind::check: return "check";
    case step_kind::convert: return "convert";
    case step_kind::upload: return "upload";
    case step_kind::reduce: return "reduce";
    case step_kind::dot: return "dot";
    case step_kind::materialize: return "materialize";
    case step_kind::outputs: return "outputs";
    case step_kind::output: return "output";
    case step_kind::update: return "update";
    case step_kind::copy: return "copy";
    case step_kind::assemble: return "assemble";
    case step_kind::gather: return "gather";
    case step_kind::scatter: return "scatter";
    case step_kind::communicate: return "communicate";
    case step_kind::install: return "install";
    case step_kind::transfer: return "transfer";
  }
  return "?";
}

/// The view an update of a view writes, as the expression prints it ("u[1:-1, 1:-1]").
FUSOR_RUNTIME std::string region_text(const graph& g, const graph_update& u);

FUSOR_RUNTIME std::string update_label(const graph& g, int k);

/// `label` with each expression in `named` (text, name) — the values an
/// earlier step left in a temporary this step reads — shown by its
/// temporary's name (plan::str's rule; compile/impl/plan.ipp).
FUSOR_RUNTIME std::string elide_read_values(std::string label, std::vector<std::pair<std::string, std::string>> named);

/// `text` with every `shape(X)` and `size(X)` in `known` (text, value)
/// replaced by what they are in this plan: "(400,)", "400".
FUSOR_RUNTIME std::string with_known_shapes(std::string text, const std::vector<std::pair<std::string, std::string>>& known);

}  // namespace detail


}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/plan.ipp"
#endif
