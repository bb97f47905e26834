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
template <class T>
std::string number_list(const T* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

/// Whether an infix operand's text needs parentheses: it has a space outside
/// any parentheses ("a + b"). A sum that printed as one of its terms (below)
/// needs none.
inline bool spaced_at_top(std::string_view text) noexcept {
  int depth = 0;
  for (const char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ' ' && depth == 0) return true;
  }
  return false;
}

/// `a + b` (an operand that is itself infix in parentheses: bit k of
/// `parenthesize` for operand k), `-a`, or `f(a, b)`. `zero_terms`: the
/// operands of a sum known to be zeros that read nothing — a gradient's closed
/// gates (the contributions through another variable of the target's C++
/// type) and sums of them; the sum prints as its other term, or as 0, so that
/// a gradient's plan reads like the hand-written step.
inline std::string map_text(std::string_view symbol, bool infix, std::span<const std::string_view> operands,
                            unsigned parenthesize, unsigned zero_terms = 0) {
  if (infix && symbol == "+" && zero_terms != 0)
    return zero_terms == 3u ? std::string("0") : std::string(operands[zero_terms == 1u ? 1 : 0]);
  auto operand = [&](std::size_t k) {
    return (parenthesize >> k) & 1u && spaced_at_top(operands[k]) ? "(" + std::string(operands[k]) + ")"
                                                                   : std::string(operands[k]);
  };
  if (infix) return operand(0) + " " + std::string(symbol) + " " + operand(1);
  if (operands.size() == 1 && symbol.size() == 1) {  // -x, !x; -(-x), not --x (C++'s decrement)
    const std::string x = operand(0);
    return x.starts_with(symbol) ? std::string(symbol) + "(" + x + ")" : std::string(symbol) + x;
  }
  std::string s = std::string(symbol) + "(";
  for (std::size_t k = 0; k < operands.size(); ++k) s += (k ? ", " : "") + std::string(operands[k]);
  return s + ")";
}

inline std::string cast_text(std::string_view dtype_name, std::string_view operand) {
  return "cast<" + std::string(dtype_name) + ">(" + std::string(operand) + ")";
}

/// `sum(a)`, `sum(a, axis=1)`, `max(a, axis=(0, 1), keepdims=True)`.
inline std::string reduce_text(std::string_view op, std::string_view operand, int naxes, const int* axes,
                               bool keepdims) {
  std::string s = std::string(op) + "(" + std::string(operand);
  if (naxes == 1) s += ", axis=" + std::to_string(axes[0]);
  else if (naxes > 1) s += ", axis=(" + number_list(axes, naxes) + ")";
  if (keepdims) s += ", keepdims=True";
  return s + ")";
}

inline std::string dot_text(std::string_view a, std::string_view b) {
  return "dot(" + std::string(a) + ", " + std::string(b) + ")";
}

/// `transpose(a)`, or with its axes `transpose(a, (1, 0, 2))`.
template <class T>
std::string transpose_text(std::string_view operand, int count, const T* perm) {
  if (count == 0) return "transpose(" + std::string(operand) + ")";
  return "transpose(" + std::string(operand) + ", (" + number_list(perm, count) + "))";
}

/// `reshape(a, (2, 3))` and `specify_shape(a, (4,))`: an operation and a shape.
template <class T>
std::string shaped_text(std::string_view op, std::string_view operand, int count, const T* extents) {
  return std::string(op) + "(" + std::string(operand) + ", (" + number_list(extents, count) +
         (count == 1 ? ",))" : "))");
}

inline std::string diagonal_text(std::string_view operand, index_t offset, index_t axis1, index_t axis2) {
  return "diagonal(" + std::string(operand) + ", " + std::to_string(offset) + ", " + std::to_string(axis1) + ", " +
         std::to_string(axis2) + ")";
}

inline std::string take_text(std::string_view operand, std::string_view indices, index_t axis) {
  return "take(" + std::string(operand) + ", " + std::string(indices) + ", " + std::to_string(axis) + ")";
}

/// `x[1:3, None]`, `(x + y)[::2]`: a compound operand in parentheses.
inline std::string view_text(std::string_view operand, std::string_view items) {
  const bool simple = operand.find_first_of(" (") == std::string_view::npos;
  return (simple ? std::string(operand) : "(" + std::string(operand) + ")") + "[" + std::string(items) + "]";
}

// The nodes a gradient builds.
inline std::string sum_to_text(std::string_view operand, std::string_view like) {
  return "sum_to(" + std::string(operand) + ", shape(" + std::string(like) + "))";
}
inline std::string reshape_like_text(std::string_view operand, std::string_view like) {
  return "reshape(" + std::string(operand) + ", shape(" + std::string(like) + "))";
}
inline std::string size_ratio_text(std::string_view numerator, std::string_view denominator) {
  return "size(" + std::string(numerator) + ") / size(" + std::string(denominator) + ")";
}
inline std::string zeros_of_text(std::string_view like) { return "zeros(shape(" + std::string(like) + "))"; }
inline std::string gate_text(bool on, std::string_view operand) { return on ? std::string(operand) : std::string("0"); }
/// `place(g, x[1:3])`, `place(g, part 1 of concatenate((a, b), 0))`.
inline std::string place_text(std::string_view adjoint, int join_part, std::string_view forward) {
  const std::string part = join_part >= 0 ? "part " + std::to_string(join_part) + " of " : std::string();
  return "place(" + std::string(adjoint) + ", " + part + std::string(forward) + ")";
}

}  // namespace fusor::detail
