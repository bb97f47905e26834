// fusor/core/operand_tuple.hpp — the operands of an expression node: a tuple
// without std::tuple's constructors.
//
// A node keeps its operands by value, so a node's type spells out the whole
// tree below it, and a gradient's tree shares subtrees: printed out, its type
// grows exponentially with its depth. std::tuple's element-wise, converting
// and allocator constructors are templates constrained by enable_if, one of
// each implicit/explicit pair always failing; both compilers pay for every
// failure over the element types (clang prints the failed condition, types
// and all, for a diagnostic it never shows). A 22-level tree of pairs took
// 52 s in g++ 12 and 14 s in clang 14 held in std::tuple, 3.2 s and 0.45 s
// held here; a second derivative through take did not compile in clang at
// all. operand_tuple has one non-template constructor, a defaulted default
// one and the implicit copies and moves: nothing to deduce, nothing to fail.
//
// It is tuple-like: std::tuple_size, std::tuple_element, detail::get<K> (found
// by argument-dependent lookup, so detail::apply takes it as it takes a
// std::tuple) and structured bindings. It is also the device evaluators'
// tuple (gpu::tuple, backend/gpu/tuple.hpp): trivially copyable whenever its
// elements are, as a kernel parameter must be, with FUSOR_INLINE access, and
// one type in g++ and nvcc units alike. Portable.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/core/config.hpp"

namespace fusor::detail {

// The slots' and the tuple's members only pass each call on to the operands'
// own (a node's copy to its operands' copies, and so on down): folded into
// their callers (FUSOR_PLUMBING), an unoptimised build compiles none of
// them, where it compiled a copy, a move, a destructor and a constructor for
// every tuple type and every slot type: a sixth of the functions of a
// gradient test unit. Declared `= default` (the attribute needs a
// declaration), they stay trivial, and constexpr, wherever the operands' are.
template <std::size_t I, class T>
struct operand_slot {
  T value;

  FUSOR_PLUMBING constexpr operand_slot() = default;
  FUSOR_PLUMBING constexpr explicit operand_slot(T&& v) : value(static_cast<T&&>(v)) {}
  FUSOR_PLUMBING operand_slot(const operand_slot&) = default;
  FUSOR_PLUMBING operand_slot(operand_slot&&) = default;
  FUSOR_PLUMBING operand_slot& operator=(const operand_slot&) = default;
  FUSOR_PLUMBING operand_slot& operator=(operand_slot&&) = default;
  FUSOR_PLUMBING ~operand_slot() = default;
};

template <class Indices, class... T>
struct operand_tuple_base;

template <std::size_t... I, class... T>
struct operand_tuple_base<std::index_sequence<I...>, T...> : operand_slot<I, T>... {
  FUSOR_PLUMBING constexpr operand_tuple_base() = default;
  FUSOR_PLUMBING constexpr explicit operand_tuple_base(T... v)
      : operand_slot<I, T>(static_cast<T&&>(v))... {}
  FUSOR_PLUMBING operand_tuple_base(const operand_tuple_base&) = default;
  FUSOR_PLUMBING operand_tuple_base(operand_tuple_base&&) = default;
  FUSOR_PLUMBING operand_tuple_base& operator=(const operand_tuple_base&) = default;
  FUSOR_PLUMBING operand_tuple_base& operator=(operand_tuple_base&&) = default;
  FUSOR_PLUMBING ~operand_tuple_base() = default;
};

template <>
struct operand_tuple_base<std::index_sequence<>> {};

/// The operands of a node, by value, in order. An alias, not a class deriving
/// from the base: every node's operands would be one class more, named by all
/// its operands' types, in the debug information.
template <class... T>
using operand_tuple = operand_tuple_base<std::index_sequence_for<T...>, T...>;

// Operand K: its type is deduced from the base class, so there is no
// recursion over the pack, and each instance is named by operand K's type
// alone, not by the whole tuple's (names that the symbol table and the debug
// information spell out in full).
template <std::size_t K, class T>
FUSOR_INLINE FUSOR_PLUMBING constexpr const T& get(const operand_slot<K, T>& s) noexcept {
  return s.value;
}
template <std::size_t K, class T>
FUSOR_INLINE FUSOR_PLUMBING constexpr T& get(operand_slot<K, T>& s) noexcept {
  return s.value;
}
template <std::size_t K, class T>
FUSOR_INLINE FUSOR_PLUMBING constexpr T&& get(operand_slot<K, T>&& s) noexcept {
  return static_cast<T&&>(s.value);
}

}  // namespace fusor::detail

template <std::size_t... I, class... T>
struct std::tuple_size<fusor::detail::operand_tuple_base<std::index_sequence<I...>, T...>>
    : std::integral_constant<std::size_t, sizeof...(T)> {};

template <std::size_t K, std::size_t... I, class... T>
struct std::tuple_element<K, fusor::detail::operand_tuple_base<std::index_sequence<I...>, T...>> {
  using type = std::remove_cvref_t<decltype(fusor::detail::get<K>(
      std::declval<const fusor::detail::operand_tuple_base<std::index_sequence<I...>, T...>&>()))>;
};

namespace fusor::detail {

/// The indices of a tuple-like type's elements, for a walk expanded in place:
///
///   [&]<std::size_t... K>(std::index_sequence<K...>) { (f(get<K>(t)), ...); }(indices_of<decltype(t)>);
///
/// rather than a lambda handed to a helper such as apply(). Every instance of
/// such a helper is named by its lambda's type — that is, by the enclosing
/// function and so by the whole expression type — and by the tuple's, in the
/// symbol table and in the debug information's strings: walks over a
/// gradient's nodes spent more on those names than on their code. The lambda
/// above is named by its indices only.
template <class T>
inline constexpr auto indices_of = std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<T>>>{};

}  // namespace fusor::detail
