// fusor/compile/shapes.hpp — the shape of every node of a graph, from the
// shapes of one call's arguments and shared variables: NumPy broadcasting,
// reductions, dot, transposes and reshapes, each refusal a fusor::error that
// names the expression and the shapes. Run once per plan, not per call.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/region.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/errors.hpp"

namespace fusor {

namespace detail {
inline int normalise_axis(int axis, std::size_t rank, const std::string& what) {
  const int r = static_cast<int>(rank);
  if (axis < -r || axis >= r)
    throw shape_error(what + ": axis " + std::to_string(axis) + " is out of bounds for an operand of rank " +
                      std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

/// The axes a reduction node reduces, as a bit mask over its operand's axes.
FUSOR_RUNTIME std::uint32_t reduced_axes(const graph_node& n, std::size_t rank);

/// What a reduction node reads and reduces, once the plan's shapes are known:
/// the shape its operand is read at (a sum_to broadcasts its operand up to
/// the target where the target is larger) and the reduced axes of that shape.
struct reduce_geometry {
  dims in;
  std::uint32_t mask = 0;
  /// How many operand elements each output reduces. NumPy refuses max, min
  /// and argmax of none whatever the output's size (a (0, 0) operand reduced
  /// over axis 1 is refused; a (0, 3) one is not: its outputs each have 3).
  std::size_t reduced_elements() const {
    std::size_t n = 1;
    for (std::size_t d = 0; d < in.rank(); ++d)
      if (mask >> d & 1u) n *= in[d];
    return n;
  }
};
FUSOR_RUNTIME reduce_geometry reduction_of(const graph_node& n, const std::vector<dims>& shapes);

/// A size_ratio node's value: its numerator's element count over its
/// denominator's (an empty denominator gives 0: nothing to spread over).
template <class T>
T size_ratio_value(const graph_node& n, const std::vector<dims>& shapes) {
  const auto num = static_cast<double>(shapes[static_cast<std::size_t>(n.shape_of[0])].elements());
  const auto den = static_cast<double>(shapes[static_cast<std::size_t>(n.shape_of[1])].elements());
  return den == 0 ? T(0) : static_cast<T>(num / den);
}

/// The value of a node every backend's evaluator reads as a scalar: a
/// constant, a size ratio (a mean's 1/n), or zeros (zeros_of).
template <class T>
T scalar_node_value(const graph& g, const std::vector<dims>& shapes, int node) {
  const graph_node& n = g[node];
  if (n.kind == node_kind::size_ratio) return size_ratio_value<T>(n, shapes);
  T v(0);
  if (n.kind == node_kind::constant) std::memcpy(&v, &g.constants[static_cast<std::size_t>(n.leaf)].bits, sizeof(T));
  return v;
}

/// The operand shape with the reduced axes set to 1 (where a reduction
/// accumulates: the same element order as its result).
inline dims kept_shape(const dims& in, std::uint32_t mask) {
  dims keep;
  for (std::size_t d = 0; d < in.rank(); ++d) keep.push_back(((mask >> d) & 1u) ? 1 : in[d]);
  return keep;
}

/// The permutation of a transpose node over an operand of rank r.
inline std::array<int, max_rank> permutation(const graph_node& n, std::size_t r) {
  std::array<int, max_rank> perm{};
  if (n.nparams == 0) {
    for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<int>(r - 1 - i);
    return perm;
  }
  if (static_cast<std::size_t>(n.nparams) != r)
    throw shape_error(n.text + ": the permutation has " + std::to_string(n.nparams) + " axes, the operand has rank " +
                      std::to_string(r));
  std::uint32_t seen = 0;
  for (std::size_t i = 0; i < r; ++i) {
    const int a = normalise_axis(static_cast<int>(n.params[i]), r, n.text);
    if (seen & (1u << a)) throw shape_error(n.text + ": axis " + std::to_string(a) + " is repeated");
    seen |= 1u << a;
    perm[i] = a;
  }
  return perm;
}

/// A view of a value of shape `in` with element strides `strides` (NumPy's
/// basic indexing: negative bounds count from the end, ranges are clamped, an
/// integer out of range is an index_error). `text` names the view in messages ("u[1:-1, ::2]").
FUSOR_RUNTIME resolved_view resolve_view(const view_spec& v, const std::string& text, const dims& in,
                                  const std::array<index_t, max_rank>& strides);
FUSOR_RUNTIME resolved_view resolve_view(const graph_node& n, const dims& in, const std::array<index_t, max_rank>& strides);

/// The diagonal of `in` (element strides `strides`) for a diagonal node:
/// axes axis1 and axis2 removed, the diagonal appended (NumPy's order).
FUSOR_RUNTIME resolved_view resolve_diagonal(const graph_node& n, const dims& in, const std::array<index_t, max_rank>& strides);

/// The shape of a join (concatenate, roll, pad) from its parts' shapes.
FUSOR_RUNTIME dims joined_shape(const graph_node& n, const std::vector<dims>& parts);

FUSOR_RUNTIME dims reshaped(const graph_node& n, const dims& in);
}  // namespace detail

/// The shape of every node, in node order (children come first).
FUSOR_RUNTIME std::vector<dims> infer_shapes(const graph& g, const call_facts& f);

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/shapes.ipp"
#endif
