// fusor/compile/impl/shapes.ipp — shape inference's definitions (compile/shapes.hpp says what it checks).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/compile/shapes.hpp"

namespace fusor {
namespace detail {

FUSOR_RUNTIME std::uint32_t reduced_axes(const graph_node& n, std::size_t rank) {
  if (n.naxes == 0) return rank >= 32 ? ~0u : ((1u << rank) - 1u);
  std::uint32_t mask = 0;
  for (int i = 0; i < n.naxes; ++i) {
    const int a = normalise_axis(n.axes[static_cast<std::size_t>(i)], rank, n.text);
    if (mask & (1u << a)) throw shape_error(n.text + ": axis " + std::to_string(a) + " is repeated");
    mask |= 1u << a;
  }
  return mask;
}

FUSOR_RUNTIME reduce_geometry reduction_of(const graph_node& n, const std::vector<dims>& shapes) {
  reduce_geometry r;
  const dims& operand = shapes[static_cast<std::size_t>(n.child[0])];
  if (n.shape_of[0] < 0) {
    r.in = operand;
    r.mask = reduced_axes(n, operand.rank());
    return r;
  }
  // sum_to: the operand and the target broadcast together; the axes the
  // target lacks or has as 1 are summed.
  const dims& target = shapes[static_cast<std::size_t>(n.shape_of[0])];
  if (!try_broadcast(operand, target, r.in))
    throw shape_error(n.text + ": shapes " + operand.str() + " and " + target.str() + " do not broadcast together");
  const std::size_t lead = r.in.rank() - target.rank();
  for (std::size_t d = 0; d < r.in.rank(); ++d)
    if (d < lead || (target[d - lead] == 1 && r.in[d] != 1)) r.mask |= 1u << d;
  return r;
}

FUSOR_RUNTIME resolved_view resolve_view(const view_spec& v, const std::string& text, const dims& in,
                                  const std::array<index_t, max_rank>& strides) {
  int named = 0;  // operand axes the items name
  for (int i = 0; i < v.count; ++i) named += v.items[static_cast<std::size_t>(i)].kind != slice_item::newaxis;
  if (named > static_cast<int>(in.rank()))
    throw index_error(text + ": too many indices for an operand of shape " + in.str() + ": " +
                      std::to_string(named) + " given, " + std::to_string(in.rank()) + " axes");
  resolved_view r;
  std::size_t axis = 0;
  auto keep = [&](std::size_t extent, index_t stride) {
    if (r.shape.rank() == max_rank)
      throw rank_error(text + ": the view's rank exceeds FUSOR_MAX_RANK (" + std::to_string(max_rank) + ")");
    r.strides[r.shape.rank()] = stride;
    r.shape.push_back(extent);
  };
  for (int i = 0; i < v.count; ++i) {
    const slice_item& s = v.items[static_cast<std::size_t>(i)];
    if (s.kind == slice_item::newaxis) {
      keep(1, 0);
      continue;
    }
    const auto len = static_cast<index_t>(in[axis]);
    if (s.kind == slice_item::index) {
      index_t k = s.start;
      if (k < -len || k >= len)
        throw index_error(text + ": index " + std::to_string(s.start) + " is out of bounds for axis " +
                          std::to_string(axis) + " with size " + std::to_string(len));
      if (k < 0) k += len;
      r.offset += k * strides[axis];
      r.first[axis] = k;
      r.count[axis] = 1;
      r.step[axis] = 1;
    } else {
      const index_t step = s.step;
      if (step == 0) throw value_error(text + ": slice step cannot be zero");
      // NumPy's slice.indices(len)
      index_t start, stop;
      if (!s.has_start) {
        start = step > 0 ? 0 : len - 1;
      } else {
        start = s.start < 0 ? s.start + len : s.start;
        if (start < 0) start = step < 0 ? -1 : 0;
        else if (start >= len) start = step < 0 ? len - 1 : len;
      }
      if (!s.has_stop) {
        stop = step > 0 ? len : -1;
      } else {
        stop = s.stop < 0 ? s.stop + len : s.stop;
        if (stop < 0) stop = step < 0 ? -1 : 0;
        else if (stop >= len) stop = step < 0 ? len - 1 : len;
      }
      index_t count = 0;
      if (step > 0 && stop > start) count = (stop - start - 1) / step + 1;
      if (step < 0 && start > stop) count = (start - stop - 1) / (-step) + 1;
      if (count > 0) r.offset += start * strides[axis];
      keep(static_cast<std::size_t>(count), strides[axis] * step);
      r.first[axis] = count > 0 ? start : 0;
      r.count[axis] = count;
      r.step[axis] = step;
    }
    ++axis;
  }
  for (; axis < in.rank(); ++axis) {  // axes not named: whole
    keep(in[axis], strides[axis]);
    r.first[axis] = 0;
    r.count[axis] = static_cast<index_t>(in[axis]);
    r.step[axis] = 1;
  }
  return r;
}

FUSOR_RUNTIME resolved_view resolve_view(const graph_node& n, const dims& in, const std::array<index_t, max_rank>& strides) {
  return resolve_view(n.slices, n.text, in, strides);
}

FUSOR_RUNTIME resolved_view resolve_diagonal(const graph_node& n, const dims& in, const std::array<index_t, max_rank>& strides) {
  const int rank = static_cast<int>(in.rank());
  if (rank < 2) throw rank_error(n.text + ": the operand has shape " + in.str() + ", a diagonal needs two axes");
  const int a1 = normalise_axis(static_cast<int>(n.params[1]), rank, n.text);
  const int a2 = normalise_axis(static_cast<int>(n.params[2]), rank, n.text);
  if (a1 == a2) throw value_error(n.text + ": axis1 and axis2 are the same axis (" + std::to_string(a1) + ")");
  const index_t k = n.params[0];
  const auto n1 = static_cast<index_t>(in[static_cast<std::size_t>(a1)]);
  const auto n2 = static_cast<index_t>(in[static_cast<std::size_t>(a2)]);
  // Element i of the diagonal is (i - min(k, 0), i + max(k, 0)) in (axis1, axis2).
  const index_t r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;
  const index_t length = std::max<index_t>(0, std::min(n1 - r0, n2 - c0));
  resolved_view r;
  for (int d = 0; d < rank; ++d)
    if (d != a1 && d != a2) {
      r.strides[r.shape.rank()] = strides[static_cast<std::size_t>(d)];
      r.shape.push_back(in[static_cast<std::size_t>(d)]);
    }
  r.strides[r.shape.rank()] = strides[static_cast<std::size_t>(a1)] + strides[static_cast<std::size_t>(a2)];
  r.shape.push_back(static_cast<std::size_t>(length));
  if (length > 0) r.offset = r0 * strides[static_cast<std::size_t>(a1)] + c0 * strides[static_cast<std::size_t>(a2)];
  return r;
}

FUSOR_RUNTIME dims joined_shape(const graph_node& n, const std::vector<dims>& parts) {
  const join_params& j = n.join;
  const dims& a = parts[0];
  const int r = static_cast<int>(a.rank());
  dims out = a;
  switch (j.kind) {
    case join_kind::concatenate: {
      if (r == 0) throw value_error(n.text + ": zero-dimensional arrays cannot be concatenated");
      const int axis = normalise_axis(j.axis, a.rank(), n.text);
      for (std::size_t k = 1; k < parts.size(); ++k) {
        const dims& b = parts[k];
        if (b.rank() != a.rank())
          throw shape_error(n.text + ": all the parts must have the same rank, but part 0 has shape " + a.str() +
                            " and part " + std::to_string(k) + " has shape " + b.str());
        for (int d = 0; d < r; ++d)
          if (d != axis && b[static_cast<std::size_t>(d)] != a[static_cast<std::size_t>(d)])
            throw shape_error(n.text + ": all the parts' extents except along the concatenation axis must match, "
                              "but along axis " + std::to_string(d) + " part 0 has " + std::to_string(a[static_cast<std::size_t>(d)]) +
                              " and part " + std::to_string(k) + " has " + std::to_string(b[static_cast<std::size_t>(d)]));
        out[static_cast<std::size_t>(axis)] += b[static_cast<std::size_t>(axis)];
      }
      return out;
    }
    case join_kind::roll:
      if (r == 0) throw value_error(n.text + ": a rank-0 operand has no axis to roll");
      (void)normalise_axis(j.axis, a.rank(), n.text);
      return out;
    case join_kind::pad_constant:
    case join_kind::pad_edge: {
      if (j.widths != 1 && j.widths != r)
        throw value_error(n.text + ": " + std::to_string(j.widths) + " pad widths for an operand of shape " + a.str() +
                          " (give one pair for every axis, or one pair for all)");
      for (int d = 0; d < r; ++d) {
        const auto w = static_cast<std::size_t>(j.widths == 1 ? 0 : d);
        const index_t lo = j.before[w], hi = j.after[w];
        if (j.kind == join_kind::pad_edge && a[static_cast<std::size_t>(d)] == 0 && (lo > 0 || hi > 0))
          throw value_error(n.text + ": cannot extend the empty axis " + std::to_string(d) + " with its edge");
        out[static_cast<std::size_t>(d)] += static_cast<std::size_t>(lo + hi);
      }
      return out;
    }
  }
  return out;
}

FUSOR_RUNTIME dims reshaped(const graph_node& n, const dims& in) {
  dims shape;
  int infer = -1;
  for (int i = 0; i < n.nparams; ++i) {
    const index_t e = n.params[static_cast<std::size_t>(i)];
    if (e == -1) {
      if (infer >= 0) throw shape_error(n.text + ": only one extent may be -1");
      infer = i;
      shape.push_back(1);
    } else if (e < 0) {
      throw shape_error(n.text + ": negative extent " + std::to_string(e));
    } else {
      shape.push_back(static_cast<std::size_t>(e));
    }
  }
  // The requested shape must be a possible array before its element count
  // means anything: a product taken modulo 2^64 would accept (2^62 + 1, 4)
  // for four elements.
  if (!fits(shape, size_of(n.type))) throw shape_error(n.text + ": " + too_large(shape, n.type));
  const std::size_t total = in.elements();
  const std::size_t known = shape.elements();  // the -1 extent counted as 1
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      throw shape_error(n.text + ": cannot reshape " + in.str() + " (" + std::to_string(total) + " elements)");
    shape[static_cast<std::size_t>(infer)] = total / known;
  } else if (known != total) {
    throw shape_error(n.text + ": cannot reshape an operand of shape " + in.str() + " (" + std::to_string(total) +
                      " elements) into " + shape.str());
  }
  return shape;
}
}  // namespace detail
}  // namespace fusor

namespace fusor {

FUSOR_RUNTIME std::vector<dims> infer_shapes(const graph& g, const call_facts& f) {
  std::vector<dims> shape(g.nodes.size());
  for (int i = 0; i < g.size(); ++i) {
    const graph_node& n = g[i];
    auto child = [&](int k) -> const dims& { return shape[static_cast<std::size_t>(n.child[static_cast<std::size_t>(k)])]; };
    dims& out = shape[static_cast<std::size_t>(i)];
    switch (n.kind) {
      case node_kind::input: out = f.inputs[static_cast<std::size_t>(n.leaf)].shape; break;
      case node_kind::shared: {
        const auto& s = f.shared[static_cast<std::size_t>(n.leaf)];
        if (!s.has_value)
          throw value_error(g.shared[static_cast<std::size_t>(n.leaf)].describe() +
                            " has no value (taken with take_value()); it cannot be read by " + n.text);
        out = *s.shape;
        break;
      }
      case node_kind::constant: out = dims{}; break;
      case node_kind::iota:
        for (int d = 0; d < n.nparams; ++d) out.push_back(static_cast<std::size_t>(n.params[static_cast<std::size_t>(d)]));
        break;
      case node_kind::map: {
        out = child(0);
        for (int k = 1; k < n.arity; ++k) {
          dims next;
          if (!try_broadcast(out, child(k), next))
            throw shape_error("operands could not be broadcast together in " + n.text + ": shapes " + out.str() +
                              " and " + child(k).str());
          out = next;
        }
        if (!fits(out)) throw shape_error(n.text + ": the broadcast " + too_large(out, n.type));
        break;
      }
      case node_kind::cast: out = child(0); break;
      case node_kind::reduce: {
        if (n.shape_of[0] >= 0) {  // sum_to: the target's shape
          detail::reduction_of(n, shape);  // checks that they broadcast
          out = shape[static_cast<std::size_t>(n.shape_of[0])];
          break;
        }
        const dims& in = child(0);
        const std::uint32_t mask = detail::reduced_axes(n, in.rank());
        for (std::size_t d = 0; d < in.rank(); ++d) {
          if (!((mask >> d) & 1u)) out.push_back(in[d]);
          else if (n.keepdims) out.push_back(1);
        }
        break;
      }
      case node_kind::dot: {
        const dims& sa = child(0);
        const dims& sb = child(1);
        if ((sa.rank() != 1 && sa.rank() != 2) || (sb.rank() != 1 && sb.rank() != 2))
          throw rank_error(n.text + ": operands must be vectors or matrices; got shapes " + sa.str() + " and " +
                           sb.str());
        const std::size_t inner_a = sa[sa.rank() - 1], inner_b = sb[0];
        if (inner_a != inner_b)
          throw shape_error(n.text + ": shapes " + sa.str() + " and " + sb.str() + " not aligned: " +
                            std::to_string(inner_a) + " (dim " + std::to_string(sa.rank() - 1) + ") != " +
                            std::to_string(inner_b) + " (dim 0)");
        if (sa.rank() == 2) out.push_back(sa[0]);
        if (sb.rank() == 2) out.push_back(sb[1]);
        if (!fits(out, size_of(n.type))) throw shape_error(n.text + ": the result's " + too_large(out, n.type));
        break;
      }
      case node_kind::transpose: {
        const dims& in = child(0);
        const auto perm = detail::permutation(n, in.rank());
        for (std::size_t d = 0; d < in.rank(); ++d) out.push_back(in[static_cast<std::size_t>(perm[d])]);
        break;
      }
      case node_kind::reshape:
        if (n.shape_of[0] >= 0) {  // reshape_like
          out = shape[static_cast<std::size_t>(n.shape_of[0])];
          if (out.elements() != child(0).elements())
            throw shape_error(n.text + ": cannot reshape an operand of shape " + child(0).str() + " into " + out.str());
        } else {
          out = detail::reshaped(n, child(0));
        }
        break;
      case node_kind::size_ratio: out = dims{}; break;
      case node_kind::zeros_of:
      case node_kind::place: out = shape[static_cast<std::size_t>(n.shape_of[0])]; break;
      case node_kind::gate:  // closed: length 1 along each of its axes, which broadcasts anywhere
        if (n.arity == 1) out = child(0);
        else
          for (int d = 0; d < (n.static_rank == dynamic_rank ? 0 : n.static_rank); ++d) out.push_back(1);
        break;
      case node_kind::view: out = detail::resolve_view(n, child(0), c_strides(child(0))).shape; break;
      case node_kind::diagonal: out = detail::resolve_diagonal(n, child(0), c_strides(child(0))).shape; break;
      case node_kind::collective:  // the processes' operands agree, per call, on what the operation needs
        out = child(0);
        g.collectives.ops[static_cast<std::size_t>(n.leaf)]->check_shape(out);
        break;
      case node_kind::specify: {
        out = child(0);
        bool same = out.rank() == static_cast<std::size_t>(n.nparams);
        for (std::size_t d = 0; same && d < out.rank(); ++d)
          same = n.params[d] < 0 || out[d] == static_cast<std::size_t>(n.params[d]);
        if (!same) {
          std::string want = "(";
          for (int i = 0; i < n.nparams; ++i)
            want += (i ? ", " : "") + (n.params[static_cast<std::size_t>(i)] < 0 ? std::string("any")
                                                                                  : std::to_string(n.params[static_cast<std::size_t>(i)]));
          want += n.nparams == 1 ? ",)" : ")";
          throw shape_error(n.text + ": the shape was specified as " + want + " but is " + out.str());
        }
        break;
      }
      case node_kind::take: {
        const dims& a = child(0);
        const dims& idx = child(1);
        if (a.rank() == 0) throw value_error(n.text + ": a rank-0 operand has no axis to index");
        const auto axis = static_cast<std::size_t>(detail::normalise_axis(static_cast<int>(n.params[0]), a.rank(), n.text));
        if (a.rank() - 1 + idx.rank() > max_rank)
          throw rank_error(n.text + ": the result's rank exceeds FUSOR_MAX_RANK (" + std::to_string(max_rank) + ")");
        for (std::size_t d = 0; d < axis; ++d) out.push_back(a[d]);
        for (std::size_t d = 0; d < idx.rank(); ++d) out.push_back(idx[d]);
        for (std::size_t d = axis + 1; d < a.rank(); ++d) out.push_back(a[d]);
        break;
      }
      case node_kind::join: {
        std::vector<dims> parts;
        for (int k = 0; k < n.arity; ++k) parts.push_back(child(k));
        out = detail::joined_shape(n, parts);
        break;
      }
      case node_kind::given: {
        const graph_given& gg = g.givens[static_cast<std::size_t>(n.leaf)];
        out = child(0);
        if (out.rank() != static_cast<std::size_t>(gg.rank))
          throw rank_error("fusor::function: the replacement of " + gg.name + ", " + g[gg.node].text + ", has shape " +
                           out.str() + ", but " + gg.name + " has rank " + std::to_string(gg.rank));
        for (std::size_t d = 0; d < out.rank(); ++d)
          if (((gg.broadcastable >> d) & 1u) && out[d] != 1)
            throw shape_error("fusor::function: the replacement of " + gg.name + ", " + g[gg.node].text +
                              ", has shape " + out.str() + ", but axis " + std::to_string(d) + " of " + gg.name +
                              " is broadcastable (length 1)");
        break;
      }
    }
    if (n.static_rank != dynamic_rank && out.rank() != static_cast<std::size_t>(n.static_rank))
      throw rank_error(n.text + ": has shape " + out.str() + ", expected rank " + std::to_string(n.static_rank));
  }
  return shape;
}

}  // namespace fusor
