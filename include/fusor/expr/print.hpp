// fusor/expr/print.hpp — `std::cout << e` for fusor expressions.
//
//   fusor::matrix<float> x{"x"};
//   auto W = fusor::shared(xt::xtensor<float, 2>{{0, 1}, {2, 3}}, "W");
//   std::cout << 2.0f * x + fusor::exp(W);   // (2 * x) + exp(W)
//
// Prints exactly what the expression's str() returns. The operator lives in
// namespace fusor and is found by argument-dependent lookup for every node
// type (they all derive from fusor::expression_base), wherever the stream
// insertion is written; no using-declaration is needed.
//
// Shared variables themselves are not printed by this operator: whether
// `std::cout << W` should show the name or the values is ambiguous. Print
// `W.name()`, or the values through `W.get_value(fusor::borrow)` (a read-only
// view, which has its own operator<<).
#pragma once

#include <concepts>
#include <ostream>
#include <string>
#include <type_traits>

#include "fusor/expr/node.hpp"

namespace fusor {

/// Writes `e.str()` to `os`: the same text as f.plan() and the profile show
/// for the expression.
template <class E>
  requires std::derived_from<E, expression_base> && requires(const E& e) {
    { e.str() } -> std::convertible_to<std::string>;
  }
std::ostream& operator<<(std::ostream& os, const E& e) {
  const std::string text = e.str();
  return os << text;
}

}  // namespace fusor
