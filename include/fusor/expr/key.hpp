// fusor/expr/key.hpp — what an expression's graph depends on besides its
// type: graph_key appends the identities of its inputs and shared variables,
// the bits of its constants and the run-time parameters of its nodes (each
// node's append_params, expr/node.hpp) to a key. eval and assign key their plan caches by
// it; grad compares occurrences of a sub-expression by it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/visit.hpp"

namespace fusor::detail {

/// What the graph of an expression depends on besides its type: the
/// identities of its inputs and shared variables, the bits of its constants,
/// and the run-time parameters of its nodes (reduction axes, permutations,
/// reshape extents), in node order.
using key_t = std::vector<std::uint64_t>;

template <class T, int N>
void graph_key(const input<T, N>& e, key_t& key) {
  key.push_back(e.id());
}
template <class L>
  requires is_basic_shared_leaf_v<L>
void graph_key(const L& e, key_t& key) {
  key.push_back(e.variable().id());
}
template <element E>
void graph_key(const constant<E>& e, key_t& key) {
  std::uint64_t bits = 0;
  const E v = e.value();
  std::memcpy(&bits, &v, sizeof v);
  key.push_back(bits);
}
template <int N>
void graph_key(const iota_node<N>& e, key_t& key) {
  e.append_params(key);
}
/// A node: its parameters, then what it holds (expr/node.hpp); nothing below
/// a closed gate.
template <class X>
  requires(X::holds)
void graph_key(const X& e, key_t& key) {
  e.append_params(key);
  if constexpr (is_gate_v<X>) {
    if (e.on()) graph_key(e.arg(), key);
  } else {
    const auto& held = e.held();
    [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      (graph_key(detail::get<K>(held), key), ...);
    }(detail::indices_of<decltype(held)>);
  }
}

}  // namespace fusor::detail
