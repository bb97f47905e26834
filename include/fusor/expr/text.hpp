// fusor/expr/text.hpp — how each kind of node is written, from its operands'
// texts. One rule per kind, used twice: by the node's str(), which passes its
// operands' str(), and by the graph builder, which passes the texts of the
// operands' graph nodes — so building a function's graph never instantiates
// str() for its expressions' trees (a gradient's are large), and the plan
// prints exactly what str() would.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "fusor/core/config.hpp"

namespace fusor::detail {

/// "a, b, c" of n numbers.
FUSOR_RUNTIME std::string number_list(const int* v, int n);
FUSOR_RUNTIME std::string number_list(const index_t* v, int n);

/// Whether an infix operand's text needs parentheses: it has a space outside
/// any parentheses ("a + b"). A sum that printed as one of its terms (below)
/// needs none.
FUSOR_RUNTIME bool spaced_at_top(std::string_view text) noexcept;

/// `a + b` (an operand that is itself infix in parentheses: bit k of
/// `parenthesize` for operand k), `-a`, or `f(a, b)`. `zero_terms`: the
/// operands of a sum known to be zeros that read nothing — a gradient's closed
/// gates (the contributions through another variable of the target's C++
/// type) and sums of them; the sum prints as its other term, or as 0, so that
/// a gradient's plan reads like the hand-written step.
FUSOR_RUNTIME std::string map_text(std::string_view symbol, bool infix, std::span<const std::string_view> operands,
                                   unsigned parenthesize, unsigned zero_terms = 0);

FUSOR_RUNTIME std::string cast_text(std::string_view dtype_name, std::string_view operand);

/// `sum(a)`, `sum(a, axis=1)`, `max(a, axis=(0, 1), keepdims=True)`.
FUSOR_RUNTIME std::string reduce_text(std::string_view op, std::string_view operand, int naxes, const int* axes,
                                      bool keepdims);

FUSOR_RUNTIME std::string dot_text(std::string_view a, std::string_view b);

/// `transpose(a)`, or with its axes `transpose(a, (1, 0, 2))` (a node's
/// permutation, or the graph's parameters).
FUSOR_RUNTIME std::string transpose_text(std::string_view operand, int count, const int* perm);
FUSOR_RUNTIME std::string transpose_text(std::string_view operand, int count, const index_t* perm);

/// `reshape(a, (2, 3))` and `specify_shape(a, (4,))`: an operation and a shape.
FUSOR_RUNTIME std::string shaped_text(std::string_view op, std::string_view operand, int count,
                                      const index_t* extents);

FUSOR_RUNTIME std::string diagonal_text(std::string_view operand, index_t offset, index_t axis1, index_t axis2);

FUSOR_RUNTIME std::string take_text(std::string_view operand, std::string_view indices, index_t axis);

/// `x[1:3, None]`, `(x + y)[::2]`: a compound operand in parentheses.
FUSOR_RUNTIME std::string view_text(std::string_view operand, std::string_view items);

// The nodes a gradient builds.
FUSOR_RUNTIME std::string sum_to_text(std::string_view operand, std::string_view like);
FUSOR_RUNTIME std::string reshape_like_text(std::string_view operand, std::string_view like);
FUSOR_RUNTIME std::string size_ratio_text(std::string_view numerator, std::string_view denominator);
FUSOR_RUNTIME std::string zeros_of_text(std::string_view like);
FUSOR_RUNTIME std::string gate_text(bool on, std::string_view operand);
/// `place(g, x[1:3])`, `place(g, part 1 of concatenate((a, b), 0))`.
FUSOR_RUNTIME std::string place_text(std::string_view adjoint, int join_part, std::string_view forward);

}  // namespace fusor::detail

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/expr/impl/text.ipp"
#endif
