// fusor/core/apply.hpp — std::apply, without what it costs the compiler.
//
// For the tuples of a function's specification (its outputs, updates, givens,
// slots) and of a join's parts as the user wrote them. The walks over a
// node's operands do not call it: each instance is named by its lambda, and
// so by the whole node type (core/operand_tuple.hpp, indices_of). The
// standard std::apply computes a noexcept specification (is_nothrow_invocable
// of the callable on every element, which deduces the callable's return type)
// and goes through std::__invoke: several extra class and function templates
// per call site. This one forwards the elements directly.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/core/operand_tuple.hpp"

namespace fusor::detail {

template <class T>
inline constexpr bool is_operand_tuple_v = false;
template <class S, class... T>
inline constexpr bool is_operand_tuple_v<operand_tuple_base<S, T...>> = true;

/// Each element by its own tuple's `get`, named, not found by argument-dependent
/// lookup: an operand tuple of a function's specs has xtensor among its element
/// types' namespaces, and xtensor's `get` then matches it as well.
template <class F, class Tuple, std::size_t... I>
constexpr decltype(auto) apply_at(F&& f, Tuple&& t, std::index_sequence<I...>) {
  if constexpr (is_operand_tuple_v<std::remove_cvref_t<Tuple>>)
    return static_cast<F&&>(f)(detail::get<I>(static_cast<Tuple&&>(t))...);
  else
    return static_cast<F&&>(f)(std::get<I>(static_cast<Tuple&&>(t))...);
}

/// f(get<0>(t), get<1>(t), ...) for a std::tuple or a detail::operand_tuple.
template <class F, class Tuple>
constexpr decltype(auto) apply(F&& f, Tuple&& t) {
  return apply_at(static_cast<F&&>(f), static_cast<Tuple&&>(t),
                  std::make_index_sequence<std::tuple_size_v<std::remove_reference_t<Tuple>>>{});
}

}  // namespace fusor::detail
