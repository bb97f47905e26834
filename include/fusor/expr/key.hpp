// fusor/expr/key.hpp — what an expression's graph depends on besides its
// type: one overload of graph_key per node kind, appending the identities of
// its inputs and shared variables, the bits of its constants and the run-time
// parameters of its nodes to a key. eval and assign key their plan caches by
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
template <class T, int N> void graph_key(const input<T, N>&, key_t&);
template <auto Tag> void graph_key(const basic_shared_leaf<Tag>&, key_t&);
template <element E> void graph_key(const constant<E>&, key_t&);
template <int N> void graph_key(const iota_node<N>&, key_t&);
template <class F, class R, class Casts, class... A> void graph_key(const map_node<F, R, Casts, A...>&, key_t&);
template <element T, class A> void graph_key(const cast_node<T, A>&, key_t&);
template <class Op, class A, int R> void graph_key(const reduce_node<Op, A, R>&, key_t&);
template <class A> void graph_key(const transpose_node<A>&, key_t&);
template <class A, int N> void graph_key(const reshape_node<A, N>&, key_t&);
template <class A, class B> void graph_key(const dot_node<A, B>&, key_t&);
template <class A, int N> void graph_key(const view_node<A, N>&, key_t&);
template <class A> void graph_key(const diagonal_node<A>&, key_t&);
template <class A> void graph_key(const specify_node<A>&, key_t&);
template <int N, class... A> void graph_key(const join_node<N, A...>&, key_t&);
template <class A, class I, int N> void graph_key(const take_node<A, I, N>&, key_t&);
template <class G, class L> void graph_key(const sum_to_node<G, L>&, key_t&);
template <class G, class L> void graph_key(const reshape_like_node<G, L>&, key_t&);
template <element T, class N, class D> void graph_key(const size_ratio_node<T, N, D>&, key_t&);
template <class C> void graph_key(const gate_node<C>&, key_t&);
template <element T, class L> void graph_key(const zeros_of_node<T, L>&, key_t&);
template <class X> void graph_key(const ref_node<X>&, key_t&);
template <class G, class F, std::size_t K> void graph_key(const place_node<G, F, K>&, key_t&);

template <class G, class F, std::size_t K>
void graph_key(const place_node<G, F, K>& e, key_t& key) {
  key.push_back(K);
  graph_key(e.arg(), key);
  graph_key(e.forward(), key);
}

template <class X>
void graph_key(const ref_node<X>& e, key_t& key) {
  graph_key(e.target(), key);
}

template <element T, class L>
void graph_key(const zeros_of_node<T, L>& e, key_t& key) {
  graph_key(e.like(), key);
}

template <class G, class L>
void graph_key(const sum_to_node<G, L>& e, key_t& key) {
  graph_key(e.arg(), key);
  graph_key(e.like(), key);
}
template <class G, class L>
void graph_key(const reshape_like_node<G, L>& e, key_t& key) {
  graph_key(e.arg(), key);
  graph_key(e.like(), key);
}
template <element T, class N, class D>
void graph_key(const size_ratio_node<T, N, D>& e, key_t& key) {
  graph_key(e.numerator(), key);
  graph_key(e.denominator(), key);
}
template <class C>
void graph_key(const gate_node<C>& e, key_t& key) {
  key.push_back(e.on() ? 1 : 0);
  if (e.on()) graph_key(e.arg(), key);
}

template <class T, int N>
void graph_key(const input<T, N>& e, std::vector<std::uint64_t>& key) {
  key.push_back(e.id());
}
template <auto Tag>
void graph_key(const basic_shared_leaf<Tag>& e, std::vector<std::uint64_t>& key) {
  key.push_back(e.variable().id());
}
template <element E>
void graph_key(const constant<E>& e, std::vector<std::uint64_t>& key) {
  std::uint64_t bits = 0;
  const E v = e.value();
  std::memcpy(&bits, &v, sizeof v);
  key.push_back(bits);
}
template <class F, class R, class Casts, class... A>
void graph_key(const map_node<F, R, Casts, A...>& e, std::vector<std::uint64_t>& key) {
  [&]<std::size_t... K>(std::index_sequence<K...>) { (graph_key(detail::get<K>(e.args()), key), ...); }(
      std::index_sequence_for<A...>{});
}
template <element T, class A>
void graph_key(const cast_node<T, A>& e, std::vector<std::uint64_t>& key) {
  graph_key(e.arg(), key);
}
template <class Op, class A, int R>
void graph_key(const reduce_node<Op, A, R>& e, std::vector<std::uint64_t>& key) {
  key.push_back(static_cast<std::uint64_t>(e.axis_count()) | (e.keeps_dims() ? 1ull << 32 : 0));
  for (int i = 0; i < e.axis_count(); ++i) key.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.axis(i))));
  graph_key(e.arg(), key);
}
template <class A>
void graph_key(const transpose_node<A>& e, std::vector<std::uint64_t>& key) {
  key.push_back(static_cast<std::uint64_t>(e.count()));
  for (int i = 0; i < e.count(); ++i) key.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.perm(i))));
  graph_key(e.arg(), key);
}
template <class A, int N>
void graph_key(const reshape_node<A, N>& e, std::vector<std::uint64_t>& key) {
  for (int i = 0; i < N; ++i) key.push_back(static_cast<std::uint64_t>(e.extent(i)));
  graph_key(e.arg(), key);
}
template <class A, class B>
void graph_key(const dot_node<A, B>& e, std::vector<std::uint64_t>& key) {
  graph_key(e.lhs(), key);
  graph_key(e.rhs(), key);
}
template <class A, class I, int N>
void graph_key(const take_node<A, I, N>& e, std::vector<std::uint64_t>& key) {
  key.push_back(static_cast<std::uint64_t>(e.axis()));
  graph_key(e.arg(), key);
  graph_key(e.indices(), key);
}
template <int N, class... A>
void graph_key(const join_node<N, A...>& e, std::vector<std::uint64_t>& key) {
  e.join().append_key(key);
  [&]<std::size_t... K>(std::index_sequence<K...>) { (graph_key(detail::get<K>(e.args()), key), ...); }(
      std::index_sequence_for<A...>{});
}
template <class A>
void graph_key(const specify_node<A>& e, std::vector<std::uint64_t>& key) {
  key.push_back(static_cast<std::uint64_t>(e.count()));
  for (int i = 0; i < e.count(); ++i) key.push_back(static_cast<std::uint64_t>(e.extent(i)));
  graph_key(e.arg(), key);
}
template <class A>
void graph_key(const diagonal_node<A>& e, std::vector<std::uint64_t>& key) {
  key.push_back(static_cast<std::uint64_t>(e.offset()));
  key.push_back(static_cast<std::uint64_t>(e.axis1()));
  key.push_back(static_cast<std::uint64_t>(e.axis2()));
  graph_key(e.arg(), key);
}
template <int N>
void graph_key(const iota_node<N>& e, std::vector<std::uint64_t>& key) {
  key.push_back(e.shape().rank());
  for (std::size_t d : e.shape()) key.push_back(d);
}
template <class A, int N>
void graph_key(const view_node<A, N>& e, std::vector<std::uint64_t>& key) {
  e.spec().append_key(key);
  graph_key(e.arg(), key);
}

}  // namespace fusor::detail
