// fusor/expr/substitute.hpp — an expression with some shared variables
// replaced by others of the same C++ type: the same expression type over
// other variables (what a compiled function's copy(swap(a, b), ...) is built
// from — Theano's Function.copy(swap=...), one predict() for several models).
#pragma once

#include <array>
#include <tuple>
#include <utility>

#include "fusor/core/apply.hpp"
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

template <class T, int N, class... S>
input<T, N> substitute(const input<T, N>& e, const std::tuple<S...>&);
template <auto Tag, class... S>
basic_shared_leaf<Tag> substitute(const basic_shared_leaf<Tag>& e, const std::tuple<S...>& swaps);
template <element E, class... S>
constant<E> substitute(const constant<E>& e, const std::tuple<S...>&);
template <int N, class... S>
iota_node<N> substitute(const iota_node<N>& e, const std::tuple<S...>&) {
  return e;
}
template <class F, class R, class Casts, class... A, class... S>
map_node<F, R, Casts, A...> substitute(const map_node<F, R, Casts, A...>& e, const std::tuple<S...>& swaps);
template <element T, class A, class... S>
cast_node<T, A> substitute(const cast_node<T, A>& e, const std::tuple<S...>& swaps);
template <class Op, class A, int R, class... S>
reduce_node<Op, A, R> substitute(const reduce_node<Op, A, R>& e, const std::tuple<S...>& swaps);
template <class A, class... S>
transpose_node<A> substitute(const transpose_node<A>& e, const std::tuple<S...>& swaps);
template <class A, int N, class... S>
reshape_node<A, N> substitute(const reshape_node<A, N>& e, const std::tuple<S...>& swaps);
template <class A, class B, class... S>
dot_node<A, B> substitute(const dot_node<A, B>& e, const std::tuple<S...>& swaps);
template <class A, int N, class... S>
view_node<A, N> substitute(const view_node<A, N>& e, const std::tuple<S...>& swaps);
template <class A, class... S>
diagonal_node<A> substitute(const diagonal_node<A>& e, const std::tuple<S...>& swaps);
template <class A, class... S>
specify_node<A> substitute(const specify_node<A>& e, const std::tuple<S...>& swaps) {
  std::array<index_t, max_rank> s{};
  for (int i = 0; i < e.count(); ++i) s[static_cast<std::size_t>(i)] = e.extent(i);
  return specify_node<A>(substitute(e.arg(), swaps), s, e.count());
}
template <int N, class... A, class... S>
join_node<N, A...> substitute(const join_node<N, A...>& e, const std::tuple<S...>& swaps);
template <class A, class I, int N, class... S>
take_node<A, I, N> substitute(const take_node<A, I, N>& e, const std::tuple<S...>& swaps);
template <class G, class L, class... S>
sum_to_node<G, L> substitute(const sum_to_node<G, L>& e, const std::tuple<S...>& swaps);
template <class G, class L, class... S>
reshape_like_node<G, L> substitute(const reshape_like_node<G, L>& e, const std::tuple<S...>& swaps);
template <element T, class N, class D, class... S>
size_ratio_node<T, N, D> substitute(const size_ratio_node<T, N, D>& e, const std::tuple<S...>& swaps);
template <class C, class... S>
gate_node<C> substitute(const gate_node<C>& e, const std::tuple<S...>& swaps);
template <class G, class F, std::size_t K, class... S>
place_node<G, F, K> substitute(const place_node<G, F, K>& e, const std::tuple<S...>& swaps);
template <class X, class... S>
ref_node<X> substitute(const ref_node<X>& e, const std::tuple<S...>& swaps) {
  return ref_node<X>(substitute(e.target(), swaps));
}
template <element T, class L, class... S>
zeros_of_node<T, L> substitute(const zeros_of_node<T, L>& e, const std::tuple<S...>& swaps) {
  return zeros_of_node<T, L>(substitute(e.like(), swaps));
}

template <class T, int N, class... S>
input<T, N> substitute(const input<T, N>& e, const std::tuple<S...>&) {
  return e;
}
template <auto Tag, class... S>
basic_shared_leaf<Tag> substitute(const basic_shared_leaf<Tag>& e, const std::tuple<S...>& swaps) {
  return basic_shared_leaf<Tag>(swapped(e.variable(), swaps));
}
template <element E, class... S>
constant<E> substitute(const constant<E>& e, const std::tuple<S...>&) {
  return e;
}
template <class F, class R, class Casts, class... A, class... S>
map_node<F, R, Casts, A...> substitute(const map_node<F, R, Casts, A...>& e, const std::tuple<S...>& swaps) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return map_node<F, R, Casts, A...>(substitute(detail::get<K>(e.args()), swaps)...);
  }(std::index_sequence_for<A...>{});
}
template <element T, class A, class... S>
cast_node<T, A> substitute(const cast_node<T, A>& e, const std::tuple<S...>& swaps) {
  return cast_node<T, A>(substitute(e.arg(), swaps));
}
template <class Op, class A, int R, class... S>
reduce_node<Op, A, R> substitute(const reduce_node<Op, A, R>& e, const std::tuple<S...>& swaps) {
  return reduce_node<Op, A, R>(substitute(e.arg(), swaps), e.axes(), e.axis_count(), e.keeps_dims());
}
template <class A, class... S>
transpose_node<A> substitute(const transpose_node<A>& e, const std::tuple<S...>& swaps) {
  std::array<int, max_rank> perm{};
  for (int i = 0; i < e.count(); ++i) perm[static_cast<std::size_t>(i)] = e.perm(i);
  return transpose_node<A>(substitute(e.arg(), swaps), perm, e.count());
}
template <class A, int N, class... S>
reshape_node<A, N> substitute(const reshape_node<A, N>& e, const std::tuple<S...>& swaps) {
  std::array<index_t, max_rank> extents{};
  for (int i = 0; i < N; ++i) extents[static_cast<std::size_t>(i)] = e.extent(i);
  return reshape_node<A, N>(substitute(e.arg(), swaps), extents);
}
template <class A, class B, class... S>
dot_node<A, B> substitute(const dot_node<A, B>& e, const std::tuple<S...>& swaps) {
  return dot_node<A, B>(substitute(e.lhs(), swaps), substitute(e.rhs(), swaps));
}
template <class A, int N, class... S>
view_node<A, N> substitute(const view_node<A, N>& e, const std::tuple<S...>& swaps) {
  return view_node<A, N>(substitute(e.arg(), swaps), e.spec());
}

template <class A, class... S>
diagonal_node<A> substitute(const diagonal_node<A>& e, const std::tuple<S...>& swaps) {
  return diagonal_node<A>(substitute(e.arg(), swaps), e.offset(), e.axis1(), e.axis2());
}

template <int N, class... A, class... S>
join_node<N, A...> substitute(const join_node<N, A...>& e, const std::tuple<S...>& swaps) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return join_node<N, A...>(e.join(), substitute(detail::get<K>(e.args()), swaps)...);
  }(std::index_sequence_for<A...>{});
}

template <class A, class I, int N, class... S>
take_node<A, I, N> substitute(const take_node<A, I, N>& e, const std::tuple<S...>& swaps) {
  return take_node<A, I, N>(substitute(e.arg(), swaps), substitute(e.indices(), swaps), e.axis());
}

template <class G, class L, class... S>
sum_to_node<G, L> substitute(const sum_to_node<G, L>& e, const std::tuple<S...>& swaps) {
  return sum_to_node<G, L>(substitute(e.arg(), swaps), substitute(e.like(), swaps));
}
template <class G, class L, class... S>
reshape_like_node<G, L> substitute(const reshape_like_node<G, L>& e, const std::tuple<S...>& swaps) {
  return reshape_like_node<G, L>(substitute(e.arg(), swaps), substitute(e.like(), swaps));
}
template <element T, class N, class D, class... S>
size_ratio_node<T, N, D> substitute(const size_ratio_node<T, N, D>& e, const std::tuple<S...>& swaps) {
  return size_ratio_node<T, N, D>(substitute(e.numerator(), swaps), substitute(e.denominator(), swaps));
}
template <class C, class... S>
gate_node<C> substitute(const gate_node<C>& e, const std::tuple<S...>& swaps) {
  return gate_node<C>(substitute(e.arg(), swaps), e.on());
}
template <class G, class F, std::size_t K, class... S>
place_node<G, F, K> substitute(const place_node<G, F, K>& e, const std::tuple<S...>& swaps) {
  return place_node<G, F, K>(substitute(e.arg(), swaps), substitute(e.forward_held(), swaps));
}

}  // namespace fusor
