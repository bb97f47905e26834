// fusor/expr/substitute.hpp — an expression with some shared variables
// replaced by others of the same C++ type: the same expression type over
// other variables (what a compiled function's copy(swap(a, b), ...) is built
// from — Theano's Function.copy(swap=...), one predict() for several models).
#pragma once

#include <array>
#include <tuple>
#include <utility>

#include "fusor/core/apply.hpp"
#include "fusor/core/config.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"
#include "fusor/expr/shape_ops.hpp"

namespace fusor {

/// One replacement: every read (and the update) of `from` uses `to` instead.
template <class T>
struct swap_spec {
  shared<T> from;
  shared<T> to;
};

/// `fusor::swap(old_variable, new_variable)`: both of the same C++ type.
template <class T>
[[nodiscard]] swap_spec<T> swap(const shared<T>& from, const shared<T>& to) {
  return swap_spec<T>{from, to};
}

/// The variable a variable is swapped for (itself when no swap names it).
template <class T, class... S>
shared<T> swapped(const shared<T>& v, const std::tuple<S...>& swaps) {
  shared<T> out = v;
  fusor::detail::apply(
      [&](const auto&... s) {
        (
            [&] {
              if constexpr (std::is_same_v<std::remove_cvref_t<decltype(s)>, swap_spec<T>>)
                if (s.from.is(v)) out = s.to;
            }(),
            ...);
      },
      swaps);
  return out;
}

/// `e` with the variables `swaps` names replaced: the same expression type.
/// Leaves other than shared variables stay; a node is remade over its
/// substituted sub-expressions (expr/node.hpp).
template <class X, class... S>
X substitute(const X& e, const std::tuple<S...>& swaps) {
  if constexpr (is_basic_shared_leaf_v<X>) {
    return X(swapped(e.variable(), swaps));
  } else if constexpr (!X::holds) {
    return e;  // inputs, constants (an array constant's variable is nobody's to swap), iota
  } else {
    const auto& held = e.held();
    return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      return e.remake(substitute(detail::get<K>(held), swaps)...);
    }(detail::indices_of<decltype(held)>);
  }
}

}  // namespace fusor
