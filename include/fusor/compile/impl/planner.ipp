// fusor/compile/impl/planner.ipp — the planner's definitions (compile/planner.hpp
// says what it decides). Part of fusor's run-time half: included by the header
// in header-only use, compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/planner.hpp"
#include "fusor/compile/region.hpp"
#include "fusor/compile/shapes.hpp"
#include "fusor/memory/buffer.hpp"

namespace fusor {

namespace detail {
template <class F>
void for_each_group_leaf(const graph& g, int node, F&& f);
/// for_each_group_leaf of operand k of `parent`, as the parent's kernels read
/// it: an operand they read from memory (a reference whose target is kept,
/// expr/fusion.hpp) is one leaf.
template <class F>
void for_each_operand_leaf(const graph& g, int parent, int k, F&& f) {
  const int c = g[parent].child[static_cast<std::size_t>(k)];
  if (((g[parent].kept_operands >> k) & 1u) != 0) f(c);
  else for_each_group_leaf(g, c, f);
}
/// Calls f(leaf) for every node whose value the fused group rooted at `node`
/// reads from memory (map, cast and constants are fused; constants read none).
template <class F>
void for_each_group_leaf(const graph& g, int node, F&& f) {
  const graph_node& n = g[node];
  if (n.kind == node_kind::map || n.kind == node_kind::cast || n.kind == node_kind::gate) {
    for (int k = 0; k < n.arity; ++k) for_each_operand_leaf(g, node, k, f);
  } else if (n.kind != node_kind::constant && n.kind != node_kind::iota && n.kind != node_kind::size_ratio &&
             n.kind != node_kind::zeros_of) {
    f(node);
  }
}

/// Whether a value of shape `from` broadcasts to `to` (NumPy's rule, `to` fixed).
inline bool broadcasts_to(const dims& from, const dims& to) {
  if (from.rank() > to.rank()) return false;
  const std::size_t lead = to.rank() - from.rank();
  for (std::size_t d = 0; d < from.rank(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  return true;
}
}  // namespace detail

class planner {
 public:
  planner(const graph& g, const call_facts& f) : g_(g), f_(f) {}

  plan build() {
    p_.sig = signature(f_);
    p_.backend = f_.backend;
    p_.space = f_.space;
    p_.shapes = infer_shapes(g_, f_);
    p_.values.resize(g_.nodes.size());
    copy_.assign(g_.nodes.size(), -1);
    direct_.assign(g_.outputs.size(), 0);
    producer_.clear();
    make_leaf_slots();
    make_values();
    check_updates();
    decide_transfers();
    decide_in_place();
    emit_steps();
    if (!g_.collectives.empty()) fuse_messages();
    assign_offsets();
    return std::move(p_);
  }

 private:
  // ------------------------------------------------------------ slots and values

  int add_slot(slot_kind kind, dtype type, const dims& shape, int owner) {
    slot_info s;
    s.kind = kind;
    s.type = type;
    s.shape = shape;
    s.owner = owner;
    s.bytes = shape.elements() * size_of(type);
    p_.slots.push_back(s);
    producer_.push_back(-1);
    return static_cast<int>(p_.slots.size()) - 1;
  }

  void set_contiguous(int node, int slot) {
    node_value& v = p_.values[static_cast<std::size_t>(node)];
    v.slot = slot;
    v.shape = p_.shapes[static_cast<std::size_t>(node)];
    v.strides = c_strides(v.shape);
  }

  void make_leaf_slots() {
    for (std::size_t i = 0; i < g_.inputs.size(); ++i)
      p_.input_slot.push_back(add_slot(slot_kind::input, f_.inputs[i].source, f_.inputs[i].shape, static_cast<int>(i)));
    for (std::size_t j = 0; j < g_.shared.size(); ++j)
      p_.shared_slot.push_back(add_slot(slot_kind::shared, g_.shared[j].type,
                                        f_.shared[j].has_value ? *f_.shared[j].shape : dims{}, static_cast<int>(j)));
    for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
      const int node = g_.outputs[k].node;
      p_.output_slot.push_back(
          add_slot(slot_kind::output, g_[node].type, p_.shapes[static_cast<std::size_t>(node)], static_cast<int>(k)));
    }
  }

  /// A contiguous copy of `node` in a temporary (made once): a materialised
  /// compound operand, or a view made contiguous.
  int copy_of(int node) {
    int& c = copy_[static_cast<std::size_t>(node)];
    if (c < 0) c = add_slot(slot_kind::temporary, g_[node].type, p_.shapes[static_cast<std::size_t>(node)], -1);
    return c;
  }

  /// The value of `node` in memory: its own, or (map, cast, constant) a copy.
  const node_value& in_memory(int node) {
    node_value& v = p_.values[static_cast<std::size_t>(node)];
    if (v.slot < 0) set_contiguous(node, copy_of(node));
    return v;
  }

  void make_values() {
    count_readers();
    for (int i = 0; i < g_.size(); ++i) {
      const graph_node& n = g_[i];
      node_value& v = p_.values[static_cast<std::size_t>(i)];
      switch (n.kind) {
        case node_kind::input: {
          const auto in = static_cast<std::size_t>(n.leaf);
          const int own = p_.input_slot[in];
          // An argument of another dtype is read converted, from a temporary;
          // so is a host argument of a function on a device, copied there.
          if (f_.inputs[in].source != g_.inputs[in].type || uploaded(in)) {
            set_contiguous(i, add_slot(slot_kind::temporary, g_.inputs[in].type, f_.inputs[in].shape, -1));
          } else if (f_.inputs[in].layout.strided) {
            // A strided argument of the input's dtype: read in place, through its strides.
            v.slot = own;
            v.shape = f_.inputs[in].shape;
            v.offset = f_.inputs[in].layout.first;
            v.strides = f_.inputs[in].layout.strides;
          } else {
            set_contiguous(i, own);
          }
          break;
        }
        case node_kind::shared: set_contiguous(i, p_.shared_slot[static_cast<std::size_t>(n.leaf)]); break;
        case node_kind::collective:
          if (over_its_variable(i)) {  // a halo exchange: its result is the variable, its ghosts refreshed
            set_contiguous(i, p_.shared_slot[static_cast<std::size_t>(g_[n.child[0]].leaf)]);
            break;
          }
          if (const int own = operand_temporary(i); own >= 0) {  // reduced in place (MPI_IN_PLACE)
            set_contiguous(i, own);
            break;
          }
          [[fallthrough]];
        case node_kind::take: {
          // A take or a collective that is an output writes straight into the output's buffer.
          const int k = direct_output_of(i);
          if (k >= 0) direct_[static_cast<std::size_t>(k)] = 1;
          set_contiguous(i, k >= 0 ? p_.output_slot[static_cast<std::size_t>(k)]
                                   : add_slot(slot_kind::temporary, n.type, p_.shapes[static_cast<std::size_t>(i)], -1));
          break;
        }
        case node_kind::reduce:
          if (sums_from_memory(i) && fused(g_[n.child[0]].kind)) {
            // Its operand is materialised; where the sum sums nothing (the
            // shapes agree), that copy is its value, and no step sums.
            const int copy = in_memory(n.child[0]).slot;
            if (p_.shapes[static_cast<std::size_t>(n.child[0])] == p_.shapes[static_cast<std::size_t>(i)]) {
              set_contiguous(i, copy);
              break;
            }
          }
          set_contiguous(i, add_slot(slot_kind::temporary, n.type, p_.shapes[static_cast<std::size_t>(i)], -1));
          break;
        case node_kind::join:
        case node_kind::place:
        case node_kind::dot: set_contiguous(i, add_slot(slot_kind::temporary, n.type, p_.shapes[static_cast<std::size_t>(i)], -1)); break;
        case node_kind::transpose: {
          const node_value& c = in_memory(n.child[0]);
          const auto perm = detail::permutation(n, c.shape.rank());
          v.slot = c.slot;
          v.offset = c.offset;
          v.shape = p_.shapes[static_cast<std::size_t>(i)];
          for (std::size_t d = 0; d < c.shape.rank(); ++d) v.strides[d] = c.strides[static_cast<std::size_t>(perm[d])];
          break;
        }
        case node_kind::reshape: {
          const node_value& c = in_memory(n.child[0]);
          const bool in_place = c.contiguous();
          v.slot = in_place ? c.slot : copy_of(n.child[0]);
          v.offset = in_place ? c.offset : 0;
          v.shape = p_.shapes[static_cast<std::size_t>(i)];
          v.strides = c_strides(v.shape);
          break;
        }
        case node_kind::view:
        case node_kind::diagonal: {
          // A view of a value in memory: the same slot, with an offset and strides.
          const node_value c = in_memory(n.child[0]);
          const auto r = n.kind == node_kind::view ? detail::resolve_view(n, c.shape, c.strides)
                                                   : detail::resolve_diagonal(n, c.shape, c.strides);
          v.slot = c.slot;
          v.offset = c.offset + r.offset;
          v.shape = r.shape;
          v.strides = r.strides;
          break;
        }
        case node_kind::specify:  // its operand's value (its shape was checked)
        case node_kind::given: {
          // The replacement's value, in memory (a leaf's own, or a copy).
          const node_value c = in_memory(n.child[0]);
          v = c;
          break;
        }
        default:  // map, cast, constant: fused, unless kept in memory for its readers
          if (n.kept) in_memory(i);
          break;
      }
    }
  }

  /// The output (not an in-place candidate) whose expression is exactly node
  /// `node`, or -1.
  int direct_output_of(int node) const {
    for (std::size_t k = 0; k < g_.outputs.size(); ++k)
      if (g_.outputs[k].node == node && !g_.outputs[k].candidate) return static_cast<int>(k);
    return -1;
  }

  /// Whether collective `node` runs in place over its operand's buffer: an
  /// operation that allows it (collective_op::over_variable), of a shared
  /// variable read whole, that is not an output, where the caller holds no
  /// view of the buffer.
  bool over_its_variable(int node) const {
    const graph_node& n = g_[node];
    const graph_node& c = g_[n.child[0]];
    return g_.collectives.ops[static_cast<std::size_t>(n.leaf)]->over_variable() && c.kind == node_kind::shared &&
           direct_output_of(node) < 0 && !f_.shared[static_cast<std::size_t>(c.leaf)].viewed;
  }

  /// The temporary collective `node` can run in place in: its operand's,
  /// where nothing else reads the operand and the collective is not an
  /// output — the slot the operand is computed into (a fused operand's copy),
  /// or the one it already has. -1 where there is none.
  int operand_temporary(int node) {
    const int c = g_[node].child[0];
    if (readers_[static_cast<std::size_t>(c)] != 1 || direct_output_of(node) >= 0) return -1;
    const node_value& v = p_.values[static_cast<std::size_t>(c)];
    if (v.slot < 0) return copy_of(c);  // fused: materialised for the collective alone
    const bool temporary = p_.slots[static_cast<std::size_t>(v.slot)].kind == slot_kind::temporary;
    return temporary && v.offset == 0 && v.contiguous() ? v.slot : -1;
  }

  /// A host argument of a call that runs on a device: copied in first.
  bool uploaded(std::size_t input) const noexcept {
    return f_.backend == backend_id::device && f_.inputs[input].space != f_.space;
  }

  // ------------------------------------------------------------ updates

  void check_updates() {
    p_.updates.resize(g_.updates.size());
    for (std::size_t k = 0; k < g_.updates.size(); ++k) {
      const graph_update& u = g_.updates[k];
      const dims& shape = p_.shapes[static_cast<std::size_t>(u.node)];
      const auto& var = g_.shared[static_cast<std::size_t>(u.variable)];
      if (u.partial) {
        check_partial(k);
        continue;
      }
      if (static_cast<int>(shape.rank()) != var.rank)
        throw rank_error("the update of " + var.describe() + ", " + g_[u.node].text +
                         ", has shape " + shape.str() + " but the variable has rank " + std::to_string(var.rank));
      for (std::size_t d = 0; d < shape.rank(); ++d)
        if (((u.broadcastable >> d) & 1u) && shape[d] != 1)
          throw shape_error("the update of " + var.describe() + ", " + g_[u.node].text + ", has shape " + shape.str() +
                            ", but axis " + std::to_string(d) + " of the variable is broadcastable");
    }
    p_.outputs.resize(g_.outputs.size());
    for (std::size_t k = 0; k < g_.updates.size(); ++k)
      if (!g_.updates[k].partial) p_.updates[k].shape = p_.shapes[static_cast<std::size_t>(g_.updates[k].node)];
    for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
      p_.outputs[k].shape = p_.shapes[static_cast<std::size_t>(g_.outputs[k].node)];
      p_.outputs[k].slot = p_.output_slot[k];
    }
  }

  /// An update of a view: the variable has a value, the region is valid for
  /// its shape, and the expression broadcasts to the region.
  void check_partial(std::size_t k) {
    const graph_update& u = g_.updates[k];
    const auto& var = g_.shared[static_cast<std::size_t>(u.variable)];
    const auto& facts = f_.shared[static_cast<std::size_t>(u.variable)];
    const std::string target = detail::region_text(g_, u);
    if (!facts.has_value)
      throw value_error("the update of " + target + " writes part of a variable that has no value yet: give " +
                        var.describe() + " a value first (set_value)");
    const dims& full = *facts.shape;
    const auto r = detail::resolve_view(u.region, target, full, c_strides(full));
    const dims& value = p_.shapes[static_cast<std::size_t>(u.node)];
    if (!detail::broadcasts_to(value, r.shape))
      throw shape_error("the update of " + target + ", " + g_[u.node].text + ", has shape " + value.str() +
                        ", which does not broadcast to the region's shape " + r.shape.str() + " (of a variable of shape " +
                        full.str() + ")");
    update_plan& p = p_.updates[k];
    p.partial = true;
    p.shape = full;
    p.region.shape = r.shape;
    p.region.strides = r.strides;
    p.region.offset = r.offset;
    regions_.resize(g_.updates.size());
    regions_[k] = r;
  }

  /// {A: B} where B is updated too hands B's old buffer to A: a swap
  /// {A: B, B: A} moves no data (R61). B's own update is then not in place.
  void decide_transfers() {
    const auto n = g_.updates.size();
    for (std::size_t k = 0; k < n; ++k) {
      const graph_node& e = g_[g_.updates[k].node];
      if (e.kind != node_kind::shared || g_.updates[k].partial) continue;
      const auto& facts = f_.shared[static_cast<std::size_t>(e.leaf)];
      if (!facts.has_value || g_.shared[static_cast<std::size_t>(e.leaf)].space != f_.space) continue;
      for (std::size_t j = 0; j < n; ++j)
        if (j != k && g_.updates[j].variable == e.leaf && !p_.updates[j].transfer_source) {
          p_.updates[k].transfer_from = static_cast<int>(j);
          p_.updates[j].transfer_source = true;
          p_.updates[k].why = "takes the old buffer of " +
                              g_.shared[static_cast<std::size_t>(g_.updates[j].variable)].describe() + " (no copy)";
          break;
        }
    }
  }

  // ------------------------------------------------------------ in place

  struct range {
    const std::byte* lo = nullptr;
    std::size_t bytes = 0;
  };

  /// The caller-visible buffer behind a slot (none for fusor's temporaries).
  range buffer_of(int slot) const {
    const slot_info& s = p_.slots[static_cast<std::size_t>(slot)];
    if (s.kind == slot_kind::input) {
      const auto& a = f_.inputs[static_cast<std::size_t>(s.owner)];
      return {a.data, a.bytes};
    }
    if (s.kind == slot_kind::shared) {
      const auto& v = f_.shared[static_cast<std::size_t>(s.owner)];
      return {v.data, v.bytes};
    }
    return {};
  }

  /// Every read of `target` by the group rooted at `root` is at the index
  /// written: the same buffer, the same layout, the result's shape and dtype.
  /// `region`: the part of the target written (an update of a view); null:
  /// all of it, contiguous, of the result's shape.
  bool reads_only_in_place(int root, range target, std::string& why, const node_value* region = nullptr) const {
    node_value whole;
    if (!region) {
      whole.shape = p_.shapes[static_cast<std::size_t>(root)];
      whole.strides = c_strides(whole.shape);
      region = &whole;
    }
    const dims& shape = region->shape;
    const dtype type = g_[root].type;
    bool ok = true;
    detail::for_each_group_leaf(g_, root, [&](int leaf) {
      const node_value& v = p_.values[static_cast<std::size_t>(leaf)];
      const range b = buffer_of(v.slot);
      const overlap o = relation(b.lo, b.bytes, target.lo, target.bytes);
      if (o == overlap::none || !ok) return;
      if (o == overlap::partial) {
        ok = false;
        why = "reads " + g_[leaf].text + ", which overlaps the buffer partially";
      } else if (g_[leaf].type != type || !(v.shape == shape) || !same_layout(v, *region)) {
        ok = false;
        why = "reads the buffer as " + g_[leaf].text + " at other indices than it writes (a shifted, permuted, broadcast or "
                                                        "reshaped read)";
      }
    });
    return ok;
  }

  /// Two views of one shape address the same elements: the same offset, and
  /// the same stride on every axis longer than 1.
  static bool same_layout(const node_value& a, const node_value& b) {
    if (a.offset != b.offset) return false;
    for (std::size_t d = 0; d < a.shape.rank(); ++d)
      if (a.shape[d] != 1 && a.strides[d] != b.strides[d]) return false;
    return true;
  }

  bool group_reads(int root, range target) const {
    bool hit = false;
    detail::for_each_group_leaf(g_, root, [&](int leaf) {
      const range b = buffer_of(p_.values[static_cast<std::size_t>(leaf)].slot);
      hit = hit || relation(b.lo, b.bytes, target.lo, target.bytes) != overlap::none;
    });
    return hit;
  }

  /// No accepted in-place write targets or reads this target, and this group
  /// reads no accepted target.
  bool acceptable(int root, range target, std::string& why) const {
    for (const auto& [other_root, other] : accepted_) {
      if (relation(other.lo, other.bytes, target.lo, target.bytes) != overlap::none) {
        why = "another in-place write targets the same buffer";
        return false;
      }
      if (group_reads(root, other)) {
        why = "it reads " + g_[other_root].text + "'s in-place target, which is overwritten";
        return false;
      }
      if (group_reads(other_root, target)) {
        why = "another in-place write (" + g_[other_root].text + ") reads this buffer";
        return false;
      }
    }
    return true;
  }

  void decide_in_place() {
    for (std::size_t k = 0; k < g_.updates.size(); ++k) {
      update_plan& u = p_.updates[k];
      if (u.transfer_from >= 0) continue;
      const int root = g_.updates[k].node;
      const int var = g_.updates[k].variable;
      const auto& facts = f_.shared[static_cast<std::size_t>(var)];
      std::string why;
      const range target{facts.data, facts.bytes};
      if (u.transfer_source) why = "its old buffer goes to another variable";
      else if (!facts.has_value) why = "the variable has no value";
      else if (!(*facts.shape == u.shape)) why = "the shape changes from " + facts.shape->str() + " to " + u.shape.str();
      else if (g_.shared[static_cast<std::size_t>(var)].space != f_.space)
        why = "the variable is in " + g_.shared[static_cast<std::size_t>(var)].space.str() + ", the call runs in " +
              f_.space.str();
      else if (facts.viewed) why = "a view the caller holds shares the buffer";
      else if (reads_only_in_place(root, target, why, u.partial ? &u.region : nullptr) &&
               acceptable(root, target, why)) {
        u.in_place = true;
        u.why = "in place";
        accepted_.push_back({root, target});
        continue;
      }
      u.why = "not in place: " + why + "; computed into a spare buffer, installed after the call";
    }
    for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
      if (!g_.outputs[k].candidate) continue;
      output_plan& o = p_.outputs[k];
      const int root = g_.outputs[k].node;
      std::string why = "no lent input (In(x, borrow), a non-const lvalue of its dtype and shape) that it reads";
      for (std::size_t a = 0; a < g_.inputs.size() && !o.in_place; ++a) {
        const auto& in = f_.inputs[a];
        if (!in.writable || in.source != g_[root].type || g_.inputs[a].type != g_[root].type || !(in.shape == o.shape))
          continue;
        const range target{in.data, in.bytes};
        if (!group_reads(root, target)) continue;
        std::string reason;
        if (reads_only_in_place(root, target, reason) && acceptable(root, target, reason)) {
          o.in_place = true;
          o.input = static_cast<int>(a);
          o.slot = p_.input_slot[a];
          o.why = "in place, in the buffer of input '" + g_.inputs[a].name + "' (R47)";
          accepted_.push_back({root, target});
        } else {
          why = reason;
        }
      }
      if (!o.in_place) o.why = "not in place: " + why;
    }
  }

  // ------------------------------------------------------------ steps

  int emit(step_info s) {
    p_.steps.push_back(std::move(s));
    return static_cast<int>(p_.steps.size()) - 1;
  }

  /// Emits, once, the steps that produce the temporaries `node`'s group reads.
  void ensure_group(int node) {
    detail::for_each_group_leaf(g_, node, [&](int leaf) { ensure_value(leaf); });
  }
  /// The same for operand k of `parent`, as the parent's kernels read it (a
  /// kept operand is read from memory, so its own value is what they need).
  void ensure_operand(int parent, int k) {
    detail::for_each_operand_leaf(g_, parent, k, [&](int leaf) { ensure_value(leaf); });
  }

  /// Adds the slot of `leaf`'s value to `reads`, once.
  void add_read(std::vector<int>& reads, int leaf) const {
    const int s = p_.values[static_cast<std::size_t>(leaf)].slot;
    if (std::find(reads.begin(), reads.end(), s) == reads.end()) reads.push_back(s);
  }
  /// The slots the group rooted at `node` reads.
  std::vector<int> group_reads_slots(int node) const {
    std::vector<int> r;
    detail::for_each_group_leaf(g_, node, [&](int leaf) { add_read(r, leaf); });
    return r;
  }
  /// The slots operand k of `parent` reads, as the parent's kernels read it.
  std::vector<int> operand_reads_slots(int parent, int k) const {
    std::vector<int> r;
    detail::for_each_operand_leaf(g_, parent, k, [&](int leaf) { add_read(r, leaf); });
    return r;
  }

  double group_bytes(const std::vector<int>& reads) const {
    double b = 0;
    for (int s : reads) b += static_cast<double>(p_.slots[static_cast<std::size_t>(s)].bytes);
    return b;
  }

  /// Emits the step producing the slot of `node`'s value, if it is a
  /// temporary not produced yet (and, first, what that step reads).
  void ensure_value(int node) {
    const graph_node& n = g_[node];
    if (n.kind == node_kind::transpose || n.kind == node_kind::reshape || n.kind == node_kind::given ||
        n.kind == node_kind::view || n.kind == node_kind::diagonal || n.kind == node_kind::specify) {
      const int child = n.child[0];
      ensure_value(child);
      const int slot = p_.values[static_cast<std::size_t>(node)].slot;
      if (slot == copy_[static_cast<std::size_t>(child)] && slot >= 0) ensure_copy(child);
      return;
    }
    const int slot = p_.values[static_cast<std::size_t>(node)].slot;
    if (slot < 0) return;
    if (const int by = producer_[static_cast<std::size_t>(slot)]; by >= 0) {
      // A collective in place shares its slot with its operand (or its
      // variable), which an earlier step may have written: done only once
      // its own step is.
      const step_info& s = p_.steps[static_cast<std::size_t>(by)];
      if (n.kind != node_kind::collective || (s.kind == step_kind::communicate && s.node == node)) return;
    }
    if (fused(n.kind)) {
      if (slot == copy_[static_cast<std::size_t>(node)]) ensure_copy(node);
      return;
    }
    if (n.kind == node_kind::input) {
      if (p_.slots[static_cast<std::size_t>(slot)].kind != slot_kind::temporary) return;
      const auto in = static_cast<std::size_t>(n.leaf);
      step_info s;
      s.kind = uploaded(in) ? step_kind::upload : step_kind::convert;
      s.node = node;
      s.dest = slot;
      s.reads = {p_.input_slot[in]};
      if (f_.inputs[in].layout.strided) {  // the conversion reads it through its strides
        s.region.slot = p_.input_slot[in];
        s.region.shape = f_.inputs[in].shape;
        s.region.offset = f_.inputs[in].layout.first;
        s.region.strides = f_.inputs[in].layout.strides;
      }
      if (s.kind == step_kind::upload)
        s.label = "copy input '" + g_.inputs[in].name + "' to " + f_.space.str() +
                  (f_.inputs[in].source != n.type ? " as " + std::string(name(n.type)) : std::string());
      else
        s.label = "convert input '" + g_.inputs[in].name + "' to " + std::string(name(n.type));
      s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    } else if (n.kind == node_kind::reduce) {
      if (slot == copy_[static_cast<std::size_t>(n.child[0])]) {  // a sum of nothing: its operand's copy
        ensure_copy(n.child[0]);
        return;
      }
      step_info s;
      s.kind = step_kind::reduce;
      s.node = node;
      s.dest = slot;
      int source = materialised_twin(node);  // the operand's value, computed already
      if (source < 0 && sums_from_memory(node)) {
        source = n.child[0];  // the operand's value, computed now (a fused one into its copy)
        ensure_value(source);
      }
      if (source >= 0) {
        s.source = source;
        s.reads = {p_.values[static_cast<std::size_t>(source)].slot};
      } else {  // the operand fused into the reduction's kernel (or, kept, read from memory)
        ensure_operand(node, 0);
        s.reads = operand_reads_slots(node, 0);
      }
      const detail::reduce_geometry r = detail::reduction_of(n, p_.shapes);
      const dims& in = r.in;
      const dims keep = detail::kept_shape(in, r.mask);
      if (n.op == reduce_kind::nanmean) s.scratch = add_slot(slot_kind::temporary, dtype::float64, keep, -1);
      if (n.op == reduce_kind::argmax || n.op == reduce_kind::argmin)
        s.scratch = add_slot(slot_kind::temporary, g_[n.child[0]].type, keep, -1);
      s.label = n.text;
      if (s.source >= 0) {  // named by what it reads: sum_to(sum_to(e, (64, 128)), (128,)), printed sum_to(t21, (128,))
        const std::string& operand = g_[n.child[0]].text;
        if (const auto at = s.label.find(operand); at != std::string::npos)
          s.label.replace(at, operand.size(), g_[s.source].text);
      }
      s.bytes = static_cast<double>(in.elements() * size_of(g_[n.child[0]].type)) +
                static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      const int scratch = s.scratch;
      const int step = emit(std::move(s));
      producer_[static_cast<std::size_t>(slot)] = step;
      if (scratch >= 0) producer_[static_cast<std::size_t>(scratch)] = step;
    } else if (n.kind == node_kind::take) {
      step_info s;
      s.kind = step_kind::gather;
      s.node = node;
      s.dest = slot;
      if (const int k = direct_output_of(node); k >= 0 && direct_[static_cast<std::size_t>(k)])
        s.target = k;  // into output k's buffer: the output's own step is not needed
      for (int k = 0; k < 2; ++k) {
        const int c = n.child[static_cast<std::size_t>(k)];
        in_memory(c);  // a fused operand or index expression gets a copy
        ensure_value(c);
        s.reads.push_back(p_.values[static_cast<std::size_t>(c)].slot);
      }
      s.label = n.text;
      s.bytes = 2.0 * static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes) +
                static_cast<double>(p_.slots[static_cast<std::size_t>(s.reads[1])].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    } else if (n.kind == node_kind::join) {
      step_info s;
      s.kind = step_kind::assemble;
      s.node = node;
      s.dest = slot;
      for (int k = 0; k < n.arity; ++k) {
        const int c = n.child[static_cast<std::size_t>(k)];
        in_memory(c);  // a fused part gets a copy
        ensure_value(c);
        const int from = p_.values[static_cast<std::size_t>(c)].slot;
        if (std::find(s.reads.begin(), s.reads.end(), from) == s.reads.end()) s.reads.push_back(from);
      }
      s.moves = join_moves(node, slot);
      s.label = n.text;
      s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    } else if (n.kind == node_kind::place) {
      step_info s;
      s.node = node;
      s.dest = slot;
      const int c = n.child[0];
      const node_value& v = in_memory(c);  // a fused adjoint gets a copy
      ensure_value(c);
      if (n.placed == place_kind::take) {
        s.kind = step_kind::scatter;
        // The scatter reads the adjoint (s.region) as contiguous runs.
        s.region = v;
        if (!v.contiguous()) {
          ensure_copy(c);
          s.region.slot = copy_of(c);
          s.region.offset = 0;
          s.region.strides = c_strides(v.shape);
        }
        s.reads.push_back(s.region.slot);
        const int idx = n.child[1];
        in_memory(idx);
        ensure_value(idx);
        s.reads.push_back(p_.values[static_cast<std::size_t>(idx)].slot);
      } else {
        s.kind = step_kind::assemble;
        s.reads.push_back(v.slot);
        s.moves = place_moves(node);
      }
      s.label = n.text;
      s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    } else if (n.kind == node_kind::collective) {
      // The transport reads one contiguous run of elements: a fused or strided
      // operand gets a contiguous copy first.
      step_info s;
      s.kind = step_kind::communicate;
      s.node = node;
      s.dest = slot;
      if (const int k = direct_output_of(node); k >= 0 && direct_[static_cast<std::size_t>(k)]) s.target = k;
      s.reads.push_back(slot_read_as(n.child[0], whole_run));
      s.in_place = s.reads[0] == s.dest;
      s.label = n.text;
      s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    } else if (n.kind == node_kind::dot) {
      step_info s;
      s.kind = step_kind::dot;
      s.node = node;
      s.dest = slot;
      s.reads = dot_operands(node);
      s.label = n.text;
      s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
      producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
    }
  }

  /// A roll by `shift` along an axis of length `len` moves two pieces:
  /// [0, len - s) to [s, len) and [len - s, len) to [0, s), s = shift modulo
  /// len in [0, len). The join's moves and its gradient's (the reverse) both
  /// come from here. An empty axis has nothing to move.
  struct roll_piece {
    index_t length, from, to;
  };
  static std::vector<roll_piece> roll_pieces(index_t shift, index_t len) {
    if (len == 0) return {};
    const index_t s = ((shift % len) + len) % len;
    return {{len - s, 0, s}, {s, len - s, 0}};
  }

  /// The moves that assemble join node `node` into slot `dest` (contiguous,
  /// of the node's shape): see expr/join.hpp.
  std::vector<step_info::move> join_moves(int node, int dest) const {
    const graph_node& n = g_[node];
    const join_params& j = n.join;
    const dims& out = p_.shapes[static_cast<std::size_t>(node)];
    const auto cs = c_strides(out);
    const int r = static_cast<int>(out.rank());
    std::vector<step_info::move> moves;
    // A move of a part's value (or a slab of it) into a box of the result.
    auto part = [&](const node_value& v, const dims& extent, index_t src_offset, index_t dst_offset) {
      step_info::move m;
      m.from = v.slot;
      m.view.rank = r;
      for (int d = 0; d < r; ++d) {
        m.view.extent[d] = static_cast<index_t>(extent[static_cast<std::size_t>(d)]);
        m.view.src_strides[d] = v.strides[static_cast<std::size_t>(d)];
        m.view.dst_strides[d] = cs[static_cast<std::size_t>(d)];
      }
      m.view.src_offset = src_offset;
      m.view.dst_offset = dst_offset;
      if (m.view.elements() > 0) moves.push_back(m);
    };
    const node_value& first = p_.values[static_cast<std::size_t>(n.child[0])];
    switch (j.kind) {
      case join_kind::concatenate: {
        const auto axis = static_cast<std::size_t>(detail::normalise_axis(j.axis, out.rank(), n.text));
        index_t at = 0;
        for (int k = 0; k < n.arity; ++k) {
          const node_value& v = p_.values[static_cast<std::size_t>(n.child[static_cast<std::size_t>(k)])];
          part(v, v.shape, v.offset, at * cs[axis]);
          at += static_cast<index_t>(v.shape[axis]);
        }
        break;
      }
      case join_kind::roll: {
        const auto axis = static_cast<std::size_t>(detail::normalise_axis(j.axis, out.rank(), n.text));
        for (const roll_piece& piece : roll_pieces(j.shift, static_cast<index_t>(out[axis]))) {
          dims extent = out;
          extent[axis] = static_cast<std::size_t>(piece.length);
          part(first, extent, first.offset + piece.from * first.strides[axis], piece.to * cs[axis]);
        }
        break;
      }
      case join_kind::pad_constant:
      case join_kind::pad_edge: {
        std::array<index_t, max_rank> lo{};
        index_t inner = 0;
        for (int d = 0; d < r; ++d) {
          lo[static_cast<std::size_t>(d)] = j.before[static_cast<std::size_t>(j.widths == 1 ? 0 : d)];
          inner += lo[static_cast<std::size_t>(d)] * cs[static_cast<std::size_t>(d)];
        }
        part(first, first.shape, first.offset, inner);
        if (j.kind == join_kind::pad_constant) {
          detail::resolved_view region;
          for (int d = 0; d < r; ++d) {
            region.first[static_cast<std::size_t>(d)] = lo[static_cast<std::size_t>(d)];
            region.count[static_cast<std::size_t>(d)] = static_cast<index_t>(first.shape[static_cast<std::size_t>(d)]);
            region.step[static_cast<std::size_t>(d)] = 1;
          }
          for (const box& b : detail::complement_boxes(out, region)) {
            step_info::move m;
            m.fill = j.fill;
            m.view.rank = r;
            for (int d = 0; d < r; ++d) {
              m.view.extent[d] = static_cast<index_t>(b.shape[static_cast<std::size_t>(d)]);
              m.view.dst_strides[d] = cs[static_cast<std::size_t>(d)];
              m.view.dst_offset += b.start[static_cast<std::size_t>(d)] * cs[static_cast<std::size_t>(d)];
            }
            if (m.view.elements() > 0) moves.push_back(m);
          }
        } else {
          // Edge: axis after axis, the slab next to each border copied over it
          // (axes before d already padded: whole; axes after d: the interior).
          for (int d = 0; d < r; ++d) {
            const auto ud = static_cast<std::size_t>(d);
            const index_t n_d = static_cast<index_t>(first.shape[ud]);
            auto slab = [&](index_t from, index_t to, index_t source) {
              if (to <= from) return;
              step_info::move m;
              m.from = dest;
              m.view.rank = r;
              for (int a = 0; a < r; ++a) {
                const auto ua = static_cast<std::size_t>(a);
                index_t start = a < d ? 0 : lo[ua];
                index_t extent = a < d ? static_cast<index_t>(out[ua]) : static_cast<index_t>(first.shape[ua]);
                if (a == d) {
                  start = from;
                  extent = to - from;
                }
                m.view.extent[a] = extent;
                m.view.dst_strides[a] = cs[ua];
                m.view.src_strides[a] = a == d ? 0 : cs[ua];
                m.view.dst_offset += start * cs[ua];
                m.view.src_offset += (a == d ? source : start) * cs[ua];
              }
              if (m.view.elements() > 0) moves.push_back(m);
            };
            slab(0, lo[ud], lo[ud]);
            slab(lo[ud] + n_d, static_cast<index_t>(out[ud]), lo[ud] + n_d - 1);
          }
        }
        break;
      }
    }
    return moves;
  }

  /// The moves that build place node `node` (a view's, a diagonal's or a join
  /// part's adjoint) into its slot, contiguous of the node's shape: the
  /// join's or the view's own moves, reversed (expr/place.hpp).
  std::vector<step_info::move> place_moves(int node) const {
    const graph_node& n = g_[node];
    const node_value& adj = p_.values[static_cast<std::size_t>(n.child[0])];
    const dims& out = p_.shapes[static_cast<std::size_t>(node)];
    const auto cs = c_strides(out);
    std::vector<step_info::move> moves;
    // adj's box of `extent` from `src_offset` (elements, in adj's slot) along
    // its own strides, into dest's from `dst_offset` along `dst_strides`.
    auto move = [&](const dims& extent, index_t src_offset, index_t dst_offset,
                    const std::array<index_t, max_rank>& dst_strides) {
      step_info::move m;
      m.from = adj.slot;
      m.view.rank = static_cast<int>(extent.rank());
      for (std::size_t d = 0; d < extent.rank(); ++d) {
        m.view.extent[d] = static_cast<index_t>(extent[d]);
        m.view.src_strides[d] = adj.strides[d];
        m.view.dst_strides[d] = dst_strides[d];
      }
      m.view.src_offset = src_offset;
      m.view.dst_offset = dst_offset;
      if (m.view.elements() > 0) moves.push_back(m);
    };
    if (n.placed == place_kind::view || n.placed == place_kind::diagonal) {
      // Zeros everywhere, then the adjoint into the region the selection read.
      step_info::move zeros;
      zeros.view.rank = static_cast<int>(out.rank());
      for (std::size_t d = 0; d < out.rank(); ++d) {
        zeros.view.extent[d] = static_cast<index_t>(out[d]);
        zeros.view.dst_strides[d] = cs[d];
      }
      if (zeros.view.elements() > 0) moves.push_back(zeros);
      const detail::resolved_view r =
          n.placed == place_kind::view ? detail::resolve_view(n, out, cs) : detail::resolve_diagonal(n, out, cs);
      move(r.shape, adj.offset, r.offset, r.strides);
      return moves;
    }
    // A join's part: the piece of the adjoint the part was moved to.
    const graph_node& j = g_[n.shape_of[1]];
    const auto k = static_cast<std::size_t>(n.params[0]);
    const dims& joined = p_.shapes[static_cast<std::size_t>(n.shape_of[1])];
    switch (j.join.kind) {
      case join_kind::concatenate: {
        const auto axis = static_cast<std::size_t>(detail::normalise_axis(j.join.axis, joined.rank(), j.text));
        index_t at = 0;
        for (std::size_t q = 0; q < k; ++q) at += static_cast<index_t>(p_.shapes[static_cast<std::size_t>(j.child[q])][axis]);
        move(out, adj.offset + at * adj.strides[axis], 0, cs);
        break;
      }
      case join_kind::roll: {
        // The join's pieces moved back: each read from where the join wrote it.
        const auto axis = static_cast<std::size_t>(detail::normalise_axis(j.join.axis, joined.rank(), j.text));
        for (const roll_piece& piece : roll_pieces(j.join.shift, static_cast<index_t>(out[axis]))) {
          dims extent = out;
          extent[axis] = static_cast<std::size_t>(piece.length);
          move(extent, adj.offset + piece.to * adj.strides[axis], piece.from * cs[axis], cs);
        }
        break;
      }
      case join_kind::pad_constant: {
        index_t inner = adj.offset;
        for (std::size_t d = 0; d < out.rank(); ++d)
          inner += j.join.before[j.join.widths == 1 ? 0 : d] * adj.strides[d];
        move(out, inner, 0, cs);
        break;
      }
      case join_kind::pad_edge:
        throw error("fusor: internal error: " + n.text + ": an edge pad has no place step");
    }
    return moves;
  }

  /// Emits what dot `node`'s operands need and returns the slots BLAS reads
  /// (an operand BLAS cannot read as it is gets a contiguous copy).
  std::vector<int> dot_operands(int node) {
    std::vector<int> reads;
    for (int k = 0; k < 2; ++k) reads.push_back(slot_read_as(g_[node].child[static_cast<std::size_t>(k)], blas_ready));
    return reads;
  }

  /// A view a transport reads as it is: one run of elements from the start.
  static bool whole_run(const node_value& v) { return v.offset == 0 && v.contiguous(); }

  /// Consecutive communication steps that combine (collective_op::
  /// combines_with: allreduces of one kind over one communicator) and move
  /// the same dtype go as one message where each is small: a message costs a
  /// latency (microseconds inside a node, tens across a network) that the
  /// packing, a copy of a few kilobytes, does not. Larger ones go alone: on
  /// them the packing would cost as much as the message saves.
  void fuse_messages() {
    constexpr std::size_t small = std::size_t{64} << 10, most = std::size_t{1} << 20;
    auto& steps = p_.steps;
    auto bytes_of = [&](const step_info& s) {
      return p_.shapes[static_cast<std::size_t>(s.node)].elements() * size_of(g_[s.node].type);
    };
    auto op_of = [&](const step_info& s) -> const collective_op& {
      return *g_.collectives.ops[static_cast<std::size_t>(g_[s.node].leaf)];
    };
    for (std::size_t i = 0; i < steps.size();) {
      if (steps[i].kind != step_kind::communicate) {
        ++i;
        continue;
      }
      std::size_t j = i + 1, total = bytes_of(steps[i]);
      auto joins = [&](const step_info& s) {
        if (s.kind != step_kind::communicate || g_[s.node].type != g_[steps[i].node].type ||
            !op_of(steps[i]).combines_with(op_of(s)) || bytes_of(s) > small || total + bytes_of(s) > most)
          return false;
        for (std::size_t k = i; k < j; ++k)  // its operand is no result of the message itself
          if (steps[k].dest == s.reads[0]) return false;
        return true;
      };
      if (total <= small)
        for (; j < steps.size() && joins(steps[j]); ++j) total += bytes_of(steps[j]);
      steps[i].message_steps = static_cast<int>(j - i);
      for (std::size_t k = i + 1; k < j; ++k) steps[k].message_steps = 0;
      i = j;
    }
  }

  /// Emits what node c's value needs and returns the slot a step reads it
  /// from: its own, where `ready` accepts its view, else a contiguous copy
  /// (a fused value gets one either way).
  int slot_read_as(int c, bool (*ready)(const node_value&)) {
    const node_value& v = in_memory(c);
    ensure_value(c);
    if (ready(v)) return v.slot;
    ensure_copy(c);
    return copy_of(c);
  }

  // ------------------------------------------------------------ updates accumulated by BLAS

  /// An in-place update v <- v - c * dot(a, b) (v + c * dot, c on either
  /// side, or no c) runs as one BLAS call that accumulates into v's buffer
  /// (C = alpha a.b + C), as PyTensor's gemm_inplace does: no temporary for the
  /// product and no second pass over v. A gradient's closed gates around the
  /// product (sums with a zero that reads nothing) are seen through.
  struct accumulated_dot {
    int dot = -1;  ///< the dot node; -1: the update runs as a fused loop
    int variable = -1;  ///< the variable's node as the update reads it (for the label)
    double alpha = 0;
    std::vector<int> reads;  ///< the slots BLAS reads (a, b)
  };

  /// How many nodes, outputs and updates read each node's value.
  void count_readers() {
    readers_.assign(g_.nodes.size(), 0);
    for (const graph_node& n : g_.nodes)
      for (int c = 0; c < n.arity; ++c) ++readers_[static_cast<std::size_t>(n.child[static_cast<std::size_t>(c)])];
    for (const auto& o : g_.outputs) ++readers_[static_cast<std::size_t>(o.node)];
    for (const auto& u : g_.updates) ++readers_[static_cast<std::size_t>(u.node)];
  }

  /// What a gradient's gates leave of `node`: the term of a sum whose other
  /// term is a closed gate (or a sum of them), an open gate's operand — a
  /// node of the same value. `sole`: only through nodes nothing else reads
  /// (what is skipped is then not computed at all).
  int without_gates(int node, bool sole = true) const {
    for (;;) {
      const graph_node& n = g_[node];
      if (sole && readers_[static_cast<std::size_t>(node)] != 1) return node;
      if (n.kind == node_kind::gate && n.arity == 1) {
        node = n.child[0];
      } else if (n.kind == node_kind::map && n.arithmetic == arith::plus && n.arity == 2 && !n.zero &&
                 (g_[n.child[0]].zero || g_[n.child[1]].zero)) {
        node = g_[n.child[0]].zero ? n.child[1] : n.child[0];
      } else {
        return node;
      }
    }
  }

  /// alpha as the update's dtype prints it (-0.1, not -0.10000000149011612).
  static std::string scale_text(double alpha, dtype t) {
    char buf[32];
    const auto r = t == dtype::float32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(alpha))
                                       : std::to_chars(buf, buf + sizeof buf, alpha);
    return std::string(buf, r.ptr);
  }

  /// A floating-point constant node's value.
  std::optional<double> constant_value(int node) const {
    const graph_node& n = g_[node];
    if (n.kind != node_kind::constant) return std::nullopt;
    if (n.type == dtype::float64) return detail::scalar_node_value<double>(g_, p_.shapes, node);
    if (n.type == dtype::float32) return static_cast<double>(detail::scalar_node_value<float>(g_, p_.shapes, node));
    return std::nullopt;
  }

  /// Whether update k has the form v -/+ [c *] dot(a, b) that BLAS can
  /// accumulate into v, on the host: the dot is read by nothing else, of v's
  /// shape and floating-point dtype, and (checked by accumulate_into) its
  /// operands share no buffer with v or another in-place write.
  accumulated_dot accumulation_form(std::size_t k) const {
    const graph_update& u = g_.updates[k];
    if (f_.backend != backend_id::host || u.partial || !p_.updates[k].in_place) return {};
    const int root = u.node;
    const graph_node& r = g_[root];
    const dtype t = r.type;
    if (t != dtype::float32 && t != dtype::float64) return {};
    if (r.kind != node_kind::map || r.arity != 2 || readers_[static_cast<std::size_t>(root)] != 1) return {};
    if (r.arithmetic != arith::minus && r.arithmetic != arith::plus) return {};
    auto is_v = [&](int c) { return g_[c].kind == node_kind::shared && g_[c].leaf == u.variable; };
    int side = -1;
    if (is_v(r.child[0])) side = 0;
    else if (r.arithmetic == arith::plus && is_v(r.child[1])) side = 1;
    if (side < 0) return {};
    double alpha = r.arithmetic == arith::minus ? -1.0 : 1.0;
    int term = without_gates(r.child[static_cast<std::size_t>(1 - side)]);
    const graph_node& m = g_[term];
    if (m.kind == node_kind::map && m.arithmetic == arith::multiplies && m.arity == 2 && m.type == t &&
        readers_[static_cast<std::size_t>(term)] == 1) {
      const std::optional<double> c0 = constant_value(m.child[0]), c1 = constant_value(m.child[1]);
      if (!c0 && !c1) return {};
      alpha *= c0 ? *c0 : *c1;
      term = without_gates(m.child[c0 ? 1 : 0]);
    }
    const graph_node& d = g_[term];
    if (d.kind != node_kind::dot || d.type != t || readers_[static_cast<std::size_t>(term)] != 1) return {};
    if (!(p_.shapes[static_cast<std::size_t>(term)] == p_.shapes[static_cast<std::size_t>(root)])) return {};
    if (producer_[static_cast<std::size_t>(p_.values[static_cast<std::size_t>(term)].slot)] >= 0) return {};
    accumulated_dot a;
    a.dot = term;
    a.variable = r.child[static_cast<std::size_t>(side)];
    a.alpha = alpha;
    return a;
  }

  /// Update k accumulated by BLAS when accumulation_form allows it and the
  /// operands it reads (emitted now) overlap neither v's buffer nor another
  /// in-place write's target: an in-place write must not change what it
  /// reads, and every other one runs before or after it.
  accumulated_dot accumulate_into(std::size_t k) {
    accumulated_dot a = accumulation_form(k);
    if (a.dot < 0) return a;
    a.reads = dot_operands(a.dot);
    for (const int r : a.reads) {
      const range b = buffer_of(r);
      for (const auto& [root, target] : accepted_)
        if (relation(b.lo, b.bytes, target.lo, target.bytes) != overlap::none) return {};
    }
    return a;
  }

  // ------------------------------------------------------------ an adjoint computed once

  /// Whether `node` is a sum that a host plan computes from its operand's
  /// value in memory, for want of a kernel fused with it (a gradient's
  /// sum_to: compile/graph.hpp, host_sums_from_memory_v).
  bool sums_from_memory(int node) const {
    const graph_node& n = g_[node];
    return f_.backend == backend_id::host && n.kind == node_kind::reduce &&
           !n.kernel(backend_id::host, kernel_role::reduce) && n.has_kernel(kernel_role::reduce_read);
  }

  /// For a sum or mean `node` whose operand is a fused expression: a node
  /// whose value, in a temporary written already, is that expression's — its
  /// own materialised copy (the operand of a dot), or a sum of the same
  /// operand to its own shape (a gradient's sum_to for a backward dot, whose
  /// adjoint a bias's gradient sums again). The reduction then reads that
  /// temporary instead of computing the expression a second time, as a
  /// hand-written step reads `p - y` once materialised. -1: none. Host plans,
  /// float sums and means: the reductions with a `reduce_read` kernel
  /// (compile/graph.hpp, reads_materialised_v).
  int materialised_twin(int node) const {
    const graph_node& n = g_[node];
    if (f_.backend != backend_id::host || !n.has_kernel(kernel_role::reduce_read)) return -1;
    const int x = without_gates(n.child[0], false);
    const dims& shape = p_.shapes[static_cast<std::size_t>(x)];
    if (g_[x].type != n.type || !fused(g_[x].kind) || !(p_.shapes[static_cast<std::size_t>(n.child[0])] == shape))
      return -1;
    const int copy = copy_[static_cast<std::size_t>(x)];
    if (copy >= 0 && producer_[static_cast<std::size_t>(copy)] >= 0 && p_.values[static_cast<std::size_t>(x)].slot == copy)
      return x;
    for (int q = 0; q < g_.size(); ++q) {
      const graph_node& m = g_[q];
      if (q == node || m.kind != node_kind::reduce || m.op != reduce_kind::sum || m.type != n.type) continue;
      if (without_gates(m.child[0], false) != x || !(p_.shapes[static_cast<std::size_t>(q)] == shape)) continue;
      const node_value& v = p_.values[static_cast<std::size_t>(q)];
      if (v.slot >= 0 && p_.slots[static_cast<std::size_t>(v.slot)].kind == slot_kind::temporary &&
          producer_[static_cast<std::size_t>(v.slot)] >= 0 && v.offset == 0 && v.contiguous())
        return q;
    }
    return -1;
  }

  /// BLAS reads a matrix as is or transposed: contiguous, or the transpose of
  /// contiguous memory.
  static bool blas_ready(const node_value& v) {
    if (v.offset != 0) return false;  // BLAS gets the slot's own start
    if (v.contiguous()) return true;
    return v.shape.rank() == 2 && v.shape[0] > 1 && v.shape[1] > 1 && v.strides[0] == 1 &&
           v.strides[1] == static_cast<index_t>(v.shape[0]);
  }

  static bool fused(node_kind k) noexcept {
    return k == node_kind::map || k == node_kind::cast || k == node_kind::constant || k == node_kind::iota ||
           k == node_kind::size_ratio || k == node_kind::gate || k == node_kind::zeros_of;
  }

  void ensure_copy(int node) {
    const int slot = copy_of(node);
    if (producer_[static_cast<std::size_t>(slot)] >= 0) return;
    const graph_node& n = g_[node];
    // The copy's kernel fuses the node's group, or reads its value (a view).
    const bool group = fused(n.kind);
    if (group) ensure_group(node);
    else ensure_value(node);
    step_info s;
    s.kind = step_kind::materialize;
    s.node = node;
    s.dest = slot;
    if (group) s.reads = group_reads_slots(node);
    else s.reads = {p_.values[static_cast<std::size_t>(node)].slot};
    s.label = "materialise " + n.text;
    s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(slot)].bytes);
    producer_[static_cast<std::size_t>(slot)] = emit(std::move(s));
  }

  step_info group_step(step_kind kind, int root, int dest, int target, std::string label) {
    ensure_group(root);
    step_info s;
    s.kind = kind;
    s.node = root;
    s.dest = dest;
    s.target = target;
    s.reads = group_reads_slots(root);
    s.label = std::move(label);
    s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(dest)].bytes);
    return s;
  }

  /// The step computing update k into slot `dest` (its spare or, in place,
  /// the variable's buffer): all of it, or an update of a view its region.
  step_info update_step(std::size_t k, int dest, std::string label) {
    step_info s = group_step(step_kind::update, g_.updates[k].node, dest, static_cast<int>(k), std::move(label));
    const update_plan& u = p_.updates[k];
    if (u.partial) {
      s.region = u.region;
      s.region.slot = dest;
      s.bytes = group_bytes(s.reads) + static_cast<double>(u.region.shape.elements() * size_of(g_[s.node].type));
    }
    return s;
  }

  /// An update of a view into a spare buffer: the rest of the variable is
  /// copied there first (as boxes; see compile/region.hpp).
  void emit_copy_of_rest(std::size_t k) {
    const update_plan& u = p_.updates[k];
    step_info s;
    s.kind = step_kind::copy;
    s.dest = u.spare;
    s.target = static_cast<int>(k);
    s.reads = {p_.shared_slot[static_cast<std::size_t>(g_.updates[k].variable)]};
    s.boxes = detail::complement_boxes(u.shape, regions_[k]);
    if (s.boxes.empty()) return;
    std::size_t elements = 0;
    for (const box& b : s.boxes) elements += b.shape.elements();
    s.bytes = 2.0 * static_cast<double>(elements * size_of(p_.slots[static_cast<std::size_t>(u.spare)].type));
    s.label = "copy the rest of " + g_.shared[static_cast<std::size_t>(g_.updates[k].variable)].describe() + " (" +
              std::to_string(s.boxes.size()) + (s.boxes.size() == 1 ? " box)" : " boxes)");
    emit(std::move(s));
  }

  void emit_steps() {
    count_readers();
    // Exponent checks: before anything is written.
    for (int i = 0; i < g_.size(); ++i)
      if (g_[i].has_kernel(kernel_role::check)) {
        step_info s;
        ensure_operand(i, 1);  // the exponent
        s.reads = operand_reads_slots(i, 1);
        s.kind = step_kind::check;
        s.node = i;
        s.label = "check the exponent of " + g_[i].text;
        emit(std::move(s));
      }
    // Gathers check their indices: before any output or update is written.
    for (int i = 0; i < g_.size(); ++i)
      if (g_[i].kind == node_kind::take) ensure_value(i);
    // Collectives: every operand first, then the communication steps side by
    // side, so that several of one kind can go as one message (fuse_messages).
    // (A collective that is an output writes into the output's buffer.)
    for (int i = 0; i < g_.size(); ++i)
      if (g_[i].kind == node_kind::collective) (void)slot_read_as(g_[i].child[0], whole_run);
    for (int i = 0; i < g_.size(); ++i)
      if (g_[i].kind == node_kind::collective) ensure_value(i);
    // Outputs that are never written in place: one pass where they share a shape.
    std::vector<int> plain;
    bool direct = false;
    for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
      direct = direct || direct_[k];
      if (!g_.outputs[k].candidate && !direct_[k]) plain.push_back(static_cast<int>(k));
    }
    // The one-pass kernel computes every plain output: not when one was gathered directly.
    bool one_shape = !direct && plain.size() > 1 &&
                     g_.multi_output_kernel[static_cast<std::size_t>(f_.backend)] != nullptr;
    for (int k : plain) one_shape = one_shape && p_.outputs[static_cast<std::size_t>(k)].shape == p_.outputs[static_cast<std::size_t>(plain[0])].shape;
    if (one_shape) {
      step_info s;
      s.kind = step_kind::outputs;
      s.label = "fused outputs";
      std::vector<int> dests;
      for (int k : plain) {
        const int root = g_.outputs[static_cast<std::size_t>(k)].node;
        ensure_group(root);
        s.group.push_back({root, p_.output_slot[static_cast<std::size_t>(k)], k});
        s.label += " " + std::to_string(k);
        for (int r : group_reads_slots(root))
          if (std::find(s.reads.begin(), s.reads.end(), r) == s.reads.end()) s.reads.push_back(r);
        dests.push_back(p_.output_slot[static_cast<std::size_t>(k)]);
      }
      s.bytes = group_bytes(s.reads) + group_bytes(dests);
      emit(std::move(s));
    } else {
      for (int k : plain)
        emit(group_step(step_kind::output, g_.outputs[static_cast<std::size_t>(k)].node,
                        p_.output_slot[static_cast<std::size_t>(k)], k, "output " + std::to_string(k)));
    }
    // Candidate outputs refused in place, then updates not in place: into
    // buffers no caller sees (a borrowed output's own buffer, a spare).
    for (std::size_t k = 0; k < g_.outputs.size(); ++k)
      if (g_.outputs[k].candidate && !p_.outputs[k].in_place)
        emit(group_step(step_kind::output, g_.outputs[k].node, p_.output_slot[k], static_cast<int>(k),
                        "output " + std::to_string(k)));
    for (std::size_t k = 0; k < g_.updates.size(); ++k) {
      update_plan& u = p_.updates[k];
      if (u.in_place || u.transfer_from >= 0) continue;
      u.spare = add_slot(slot_kind::spare, g_[g_.updates[k].node].type, u.shape, static_cast<int>(k));
      if (u.partial) emit_copy_of_rest(k);
      emit(update_step(k, u.spare, detail::update_label(g_, static_cast<int>(k))));
    }
    // The in-place writes, after every other reader — the temporaries they
    // read included: all of those are computed first, from the values of the
    // call's start (an in-place write must not change what a later temporary
    // reads: update(w, w / 2) with update(b, b - sum(w))).
    std::vector<accumulated_dot> by_blas(g_.updates.size());
    for (std::size_t k = 0; k < g_.updates.size(); ++k)
      if (p_.updates[k].in_place) {
        by_blas[k] = accumulate_into(k);
        if (by_blas[k].dot < 0) ensure_group(g_.updates[k].node);
      }
    for (std::size_t k = 0; k < g_.outputs.size(); ++k)
      if (p_.outputs[k].in_place) ensure_group(g_.outputs[k].node);
    for (std::size_t k = 0; k < g_.updates.size(); ++k)
      if (p_.updates[k].in_place) {
        const int var_slot = p_.shared_slot[static_cast<std::size_t>(g_.updates[k].variable)];
        step_info s;
        if (by_blas[k].dot >= 0) {
          s.kind = step_kind::dot;
          s.node = by_blas[k].dot;
          s.dest = var_slot;
          s.target = static_cast<int>(k);
          s.reads = by_blas[k].reads;
          s.reads.push_back(var_slot);
          s.alpha = by_blas[k].alpha;
          s.accumulate = true;
          s.label = detail::update_label(g_, static_cast<int>(k)) + " (in place, by BLAS: " +
                    g_[by_blas[k].variable].text + " += " + scale_text(by_blas[k].alpha, g_[by_blas[k].dot].type) + " * " +
                    g_[by_blas[k].dot].text + ")";
          s.bytes = group_bytes(s.reads) + static_cast<double>(p_.slots[static_cast<std::size_t>(var_slot)].bytes);
        } else {
          s = update_step(k, var_slot, detail::update_label(g_, static_cast<int>(k)) + " (in place)");
        }
        s.in_place = true;
        emit(std::move(s));
      }
    for (std::size_t k = 0; k < g_.outputs.size(); ++k)
      if (p_.outputs[k].in_place) {
        auto s = group_step(step_kind::output, g_.outputs[k].node, p_.outputs[k].slot, static_cast<int>(k),
                            "output " + std::to_string(k) + " (in place)");
        s.in_place = true;
        emit(std::move(s));
      }
    // The commit: installs and transfers (no kernel).
    for (std::size_t k = 0; k < g_.updates.size(); ++k) {
      const update_plan& u = p_.updates[k];
      if (u.in_place) continue;
      step_info s;
      s.target = static_cast<int>(k);
      if (u.transfer_from >= 0) {
        s.kind = step_kind::transfer;
        s.source = u.transfer_from;
        s.label = detail::update_label(g_, static_cast<int>(k)) + " (the old buffer of " +
                  g_.shared[static_cast<std::size_t>(g_.updates[static_cast<std::size_t>(u.transfer_from)].variable)]
                      .describe() +
                  ")";
      } else {
        s.kind = step_kind::install;
        s.dest = u.spare;
        s.label = "install " + detail::update_label(g_, static_cast<int>(k)).substr(7);
      }
      emit(std::move(s));
    }
  }

  // ------------------------------------------------------------ the arena

  void assign_offsets() {
    // Liveness: each temporary from the first step writing it (an in-place
    // step may write it again) to the last reading it.
    for (std::size_t s = 0; s < p_.slots.size(); ++s)
      if (p_.slots[s].kind == slot_kind::temporary) p_.slots[s].first = p_.slots[s].last = -1;
    for (int i = 0; i < static_cast<int>(p_.steps.size()); ++i) {
      const step_info& st = p_.steps[static_cast<std::size_t>(i)];
      // A message of several communication steps writes every result at its first.
      const int writes = st.kind == step_kind::communicate ? std::max(st.message_steps, 1) : 1;
      for (int k = 0; k < writes; ++k) {
        const int d = p_.steps[static_cast<std::size_t>(i + k)].dest;
        if (d < 0) continue;
        auto& slot = p_.slots[static_cast<std::size_t>(d)];
        if (slot.kind == slot_kind::temporary && slot.first < 0) slot.first = slot.last = i;
      }
    }
    for (int i = 0; i < static_cast<int>(p_.steps.size()); ++i) {
      auto touch = [&](int s) {
        if (s < 0) return;
        auto& slot = p_.slots[static_cast<std::size_t>(s)];
        if (slot.kind == slot_kind::temporary) slot.last = std::max(slot.last, i);
      };
      for (int r : p_.steps[static_cast<std::size_t>(i)].reads) touch(r);
      touch(p_.steps[static_cast<std::size_t>(i)].scratch);
    }
    // First fit, in the order temporaries are written. A temporary no step
    // writes (the value of a node whose shape alone is read, by a gradient's
    // sum_to) takes no room.
    std::vector<int> order;
    for (std::size_t s = 0; s < p_.slots.size(); ++s)
      if (p_.slots[s].kind == slot_kind::temporary && producer_[s] >= 0) order.push_back(static_cast<int>(s));
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return p_.slots[static_cast<std::size_t>(a)].first < p_.slots[static_cast<std::size_t>(b)].first;
    });
    struct block {
      std::size_t offset, bytes;
      int last;
    };
    std::vector<block> live;
    std::size_t high = 0;
    for (int s : order) {
      slot_info& slot = p_.slots[static_cast<std::size_t>(s)];
      std::erase_if(live, [&](const block& b) { return b.last < slot.first; });
      std::sort(live.begin(), live.end(), [](const block& a, const block& b) { return a.offset < b.offset; });
      const std::size_t need = detail::padded_bytes(slot.bytes);
      std::size_t at = 0;
      for (const block& b : live) {
        if (at + need <= b.offset) break;
        at = std::max(at, b.offset + detail::padded_bytes(b.bytes));
      }
      slot.offset = at;
      live.push_back({at, slot.bytes, slot.last});
      high = std::max(high, at + need);
    }
    p_.arena_bytes = high;
  }

  const graph& g_;
  const call_facts& f_;
  plan p_;
  std::vector<int> copy_;      ///< per node: its contiguous copy's slot, or -1
  std::vector<int> producer_;  ///< per slot: the step writing it, or -1
  std::vector<std::pair<int, range>> accepted_;  ///< in-place writes accepted so far: (root, target)
  std::vector<detail::resolved_view> regions_;   ///< per update of a view: its region, resolved
  std::vector<char> direct_;                     ///< per output: a take gathered, or a collective reduced, into its buffer
  std::vector<int> readers_;                     ///< per node: how many nodes, outputs and updates read it
};

FUSOR_RUNTIME plan make_plan(const graph& g, const call_facts& f) { return planner(g, f).build(); }

}  // namespace fusor
