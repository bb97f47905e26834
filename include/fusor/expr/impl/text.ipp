// fusor/expr/impl/text.ipp — how each kind of node is written (expr/text.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/expr/text.hpp"

namespace fusor::detail {

template <class T>
std::string number_list_of(const T* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}
FUSOR_RUNTIME std::string number_list(const int* v, int n) { return number_list_of(v, n); }
FUSOR_RUNTIME std::string number_list(const index_t* v, int n) { return number_list_of(v, n); }

template <class T>
std::string transpose_text_of(std::string_view operand, int count, const T* perm) {
  if (count == 0) return "transpose(" + std::string(operand) + ")";
  return "transpose(" + std::string(operand) + ", (" + number_list(perm, count) + "))";
}
FUSOR_RUNTIME std::string transpose_text(std::string_view operand, int count, const int* perm) {
  return transpose_text_of(operand, count, perm);
}
FUSOR_RUNTIME std::string transpose_text(std::string_view operand, int count, const index_t* perm) {
  return transpose_text_of(operand, count, perm);
}

FUSOR_RUNTIME std::string shaped_text(std::string_view op, std::string_view operand, int count,
                                      const index_t* extents) {
  return std::string(op) + "(" + std::string(operand) + ", (" + number_list(extents, count) +
         (count == 1 ? ",))" : "))");
}

FUSOR_RUNTIME bool spaced_at_top(std::string_view text) noexcept {
  int depth = 0;
  for (const char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ' ' && depth == 0) return true;
  }
  return false;
}

FUSOR_RUNTIME std::string map_text(std::string_view symbol, bool infix, std::span<const std::string_view> operands,
                                   unsigned parenthesize, unsigned zero_terms) {
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

FUSOR_RUNTIME std::string cast_text(std::string_view dtype_name, std::string_view operand) {
  return "cast<" + std::string(dtype_name) + ">(" + std::string(operand) + ")";
}

FUSOR_RUNTIME std::string reduce_text(std::string_view op, std::string_view operand, int naxes, const int* axes,
                                      bool keepdims) {
  std::string s = std::string(op) + "(" + std::string(operand);
  if (naxes == 1) s += ", axis=" + std::to_string(axes[0]);
  else if (naxes > 1) s += ", axis=(" + number_list(axes, naxes) + ")";
  if (keepdims) s += ", keepdims=True";
  return s + ")";
}

FUSOR_RUNTIME std::string dot_text(std::string_view a, std::string_view b) {
  return "dot(" + std::string(a) + ", " + std::string(b) + ")";
}

FUSOR_RUNTIME std::string diagonal_text(std::string_view operand, index_t offset, index_t axis1, index_t axis2) {
  return "diagonal(" + std::string(operand) + ", " + std::to_string(offset) + ", " + std::to_string(axis1) + ", " +
         std::to_string(axis2) + ")";
}

FUSOR_RUNTIME std::string take_text(std::string_view operand, std::string_view indices, index_t axis) {
  return "take(" + std::string(operand) + ", " + std::string(indices) + ", " + std::to_string(axis) + ")";
}

FUSOR_RUNTIME std::string view_text(std::string_view operand, std::string_view items) {
  const bool simple = operand.find_first_of(" (") == std::string_view::npos;
  return (simple ? std::string(operand) : "(" + std::string(operand) + ")") + "[" + std::string(items) + "]";
}

FUSOR_RUNTIME std::string sum_to_text(std::string_view operand, std::string_view like) {
  return "sum_to(" + std::string(operand) + ", shape(" + std::string(like) + "))";
}

FUSOR_RUNTIME std::string reshape_like_text(std::string_view operand, std::string_view like) {
  return "reshape(" + std::string(operand) + ", shape(" + std::string(like) + "))";
}

FUSOR_RUNTIME std::string size_ratio_text(std::string_view numerator, std::string_view denominator) {
  return "size(" + std::string(numerator) + ") / size(" + std::string(denominator) + ")";
}

FUSOR_RUNTIME std::string zeros_of_text(std::string_view like) { return "zeros(shape(" + std::string(like) + "))"; }

FUSOR_RUNTIME std::string gate_text(bool on, std::string_view operand) { return on ? std::string(operand) : std::string("0"); }

FUSOR_RUNTIME std::string place_text(std::string_view adjoint, int join_part, std::string_view forward) {
  const std::string part = join_part >= 0 ? "part " + std::to_string(join_part) + " of " : std::string();
  return "place(" + std::string(adjoint) + ", " + part + std::string(forward) + ")";
}

}  // namespace fusor::detail
