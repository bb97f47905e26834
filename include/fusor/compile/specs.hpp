// fusor/compile/specs.hpp — how a compiled function treats its inputs,
// outputs and updates: In(x[, borrow]), Out(y[, borrow][, internal_type]),
// update(variable, expression), grouped by inputs(...), outputs(...),
// updates(...). Plain inputs and expressions are wrapped with the defaults.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "fusor/core/apply.hpp"
#include "fusor/core/operand_tuple.hpp"
#include "fusor/core/tags.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/view.hpp"
#include "fusor/expr/visit.hpp"
#include "fusor/rewrite/kept_operands.hpp"
#include "fusor/rewrite/stable.hpp"

namespace fusor {

/// Options of an input (PyTensor's In: strict, allow_downcast, borrow).
struct in_options {
  /// The function may overwrite the caller's buffer as workspace, and a
  /// borrowed output may share it (PyTensor's mutable=True, borrow=True).
  bool borrow = false;
  /// Refuse any value whose dtype is not exactly the input's.
  bool strict = false;
  /// Accept lossy conversions (R31).
  bool allow_downcast = false;
};

/// An input of a function.
template <class T, int N>
struct In {
  input<T, N> variable;
  in_options options{};

  In(input<T, N> v) : variable(FUSOR_MOVE(v)) {}  // NOLINT: plain inputs convert
  In(input<T, N> v, borrow_t) : variable(FUSOR_MOVE(v)), options{.borrow = true} {}
  In(input<T, N> v, in_options o) : variable(FUSOR_MOVE(v)), options(o) {}
};
template <class T, int N>
In(input<T, N>) -> In<T, N>;
template <class T, int N>
In(input<T, N>, borrow_t) -> In<T, N>;
template <class T, int N>
In(input<T, N>, in_options) -> In<T, N>;

/// An output of a function. Borrow and Internal are part of the type, since
/// they decide what the call returns:
///   Out(y)                         a fresh value owned by the caller (eval's type)
///   Out(y, borrow)                 a read-only view of a buffer reused by every call
///   Out(y, internal_type)          a fresh fusor::array<E>
///   Out(y, borrow, internal_type)  the reused buffer itself, as fusor::array<E>
template <class X, bool Borrow = false, bool Internal = false>
struct Out {
  using expression_type = X;
  static constexpr bool borrow = Borrow;
  static constexpr bool internal = Internal;
  X expression;

  template <class Y>
    requires(operand<Y> && std::same_as<as_expression_t<Y>, X>)
  Out(Y&& y) : expression(FUSOR_AS_EXPRESSION(y)) {}  // NOLINT: plain expressions convert
  template <class Y>
    requires(operand<Y> && std::same_as<as_expression_t<Y>, X>)
  Out(Y&& y, borrow_t) : expression(FUSOR_AS_EXPRESSION(y)) {}
  template <class Y>
    requires(operand<Y> && std::same_as<as_expression_t<Y>, X>)
  Out(Y&& y, internal_type_t) : expression(FUSOR_AS_EXPRESSION(y)) {}
  template <class Y>
    requires(operand<Y> && std::same_as<as_expression_t<Y>, X>)
  Out(Y&& y, borrow_t, internal_type_t) : expression(FUSOR_AS_EXPRESSION(y)) {}
};
template <operand Y>
Out(Y&&) -> Out<as_expression_t<Y>>;
template <operand Y>
Out(Y&&, borrow_t) -> Out<as_expression_t<Y>, true, false>;
template <operand Y>
Out(Y&&, internal_type_t) -> Out<as_expression_t<Y>, false, true>;
template <operand Y>
Out(Y&&, borrow_t, internal_type_t) -> Out<as_expression_t<Y>, true, true>;

/// An update: after the call, `variable` holds the value of `expression`,
/// computed from the values every variable had when the call began. An
/// update of a view (`partial`) writes only `region` of the variable.
template <class T, class X>
struct update_spec {
  shared<T> variable;
  X expression;
  view_spec region{};
  bool partial = false;
};

namespace detail {
/// The expression of an update of a variable of element type E: a C++ number
/// is a weak scalar of the variable's dtype (`update(n, 3)` for a float64 n
/// is 3.0), as literals are everywhere in fusor; anything else as it is.
template <class E, class Y>
auto update_expression(Y&& y) {
  using U = std::remove_cvref_t<Y>;
  if constexpr (element<U> && !std::is_same_v<U, E>) {
    static_assert(!(std::is_floating_point_v<U> && std::is_integral_v<E>),
                  "FUSOR_UPDATE_DTYPE_MISMATCH: a floating-point literal cannot update an integer variable "
                  "(it would be truncated); write an integer, or fusor::cast<E>(...) for a conversion");
    return constant<E>(static_cast<E>(y));
  } else {
    return FUSOR_AS_EXPRESSION(y);
  }
}
template <class E, class Y>
using update_expression_t = decltype(update_expression<E>(std::declval<Y>()));
}  // namespace detail

template <class T, class Y>
[[nodiscard]] auto update(const shared<T>& variable, Y&& expression) {
  using E = element_type_of<T>;
  using X = detail::update_expression_t<E, Y>;
  static_assert(std::is_same_v<value_type_t<X>, E>,
                "FUSOR_UPDATE_DTYPE_MISMATCH: an update must have the variable's dtype exactly (Theano's rule, "
                "R55); convert the expression with fusor::cast<E>(...) where E is the variable's element type");
  static_assert(rank_of<T> == dynamic_rank || X::rank == dynamic_rank || X::rank == rank_of<T>,
                "FUSOR_RANK_MISMATCH: an update must have the variable's static rank; reduce the axes it lacks "
                "(fusor::sum(e, axis)) or write an expression of the variable's rank");
  if constexpr (std::is_same_v<value_type_t<X>, E>) {
    return update_spec<T, X>{variable, detail::update_expression<E>(FUSOR_FORWARD(expression))};
  } else {
    // Refused above; an update of the right dtype keeps that the only error
    // (the function built from it compiles).
    return update_spec<T, cast_node<E, X>>{variable,
                                           cast<E>(detail::update_expression<E>(FUSOR_FORWARD(expression)))};
  }
}

/// An update of part of a variable (Theano's set_subtensor, as an update):
/// after the call, `view(u, items...)` holds `expression`, broadcast to the
/// view's shape, and the rest of u keeps its value. The expression may read
/// u anywhere (a stencil reads it shifted): it sees the values of the call's
/// start.
template <class L, int N, class Y>
  requires is_basic_shared_leaf_v<L>
[[nodiscard]] auto update(const view_node<L, N>& target, Y&& expression) {
  using T = typename L::variable_type;
  using E = element_type_of<T>;
  using X = detail::update_expression_t<E, Y>;
  static_assert(std::is_same_v<value_type_t<X>, E>,
                "FUSOR_UPDATE_DTYPE_MISMATCH: an update must have the variable's dtype exactly (Theano's rule, "
                "R55); convert the expression with fusor::cast<E>(...) where E is the variable's element type");
  static_assert(N == dynamic_rank || X::rank == dynamic_rank || X::rank <= N,
                "FUSOR_RANK_MISMATCH: an update of a view needs an expression that broadcasts to the view (of "
                "the view's rank or less)");
  if constexpr (std::is_same_v<value_type_t<X>, E>) {
    return update_spec<T, X>{target.arg().variable(), detail::update_expression<E>(FUSOR_FORWARD(expression)),
                             target.spec(), true};
  } else {  // refused above (as for a whole variable)
    return update_spec<T, cast_node<E, X>>{target.arg().variable(),
                                           cast<E>(detail::update_expression<E>(FUSOR_FORWARD(expression))),
                                           target.spec(), true};
  }
}

namespace detail {
template <class X>
struct as_in {
  using type = X;
};
template <class T, int N>
struct as_in<input<T, N>> {
  using type = In<T, N>;
};
template <class X>
struct as_out {
  using type = Out<as_expression_t<X>>;
};
template <class X, bool B, bool I>
struct as_out<Out<X, B, I>> {
  using type = Out<X, B, I>;
};
template <class X>
inline constexpr bool is_in_v = false;
template <class T, int N>
inline constexpr bool is_in_v<In<T, N>> = true;
}  // namespace detail

template <class... I>
struct inputs_t {
  detail::operand_tuple<I...> items;
};
/// The spec types a function holds after fusor's stable rewrites
/// (rewrite/stable.hpp): the same spec of the rewritten expression.
namespace detail {
template <class S>
struct stable_spec;
template <class X, bool B, bool I>
struct stable_spec<Out<X, B, I>> {
  using type = Out<stabilized_t<X>, B, I>;
  static type from(const Out<X, B, I>& o) { return type(stabilize(o.expression)); }
};
template <class T, class X>
struct stable_spec<update_spec<T, X>> {
  using type = update_spec<T, stabilized_t<X>>;
  static type from(const update_spec<T, X>& u) { return type{u.variable, stabilize(u.expression), u.region, u.partial}; }
};
template <class S>
using stable_spec_t = typename stable_spec<S>::type;
/// S after the stable rewrites: S itself when they change nothing in its
/// type (a rewrite that changes nothing in a type changes no value either),
/// without rebuilding it.
template <class S>
decltype(auto) stable_from(const S& s) {
  if constexpr (std::is_same_v<stable_spec_t<S>, S>) return (s);
  else return stable_spec<S>::from(s);
}

/// The expression a spec computes (an output's, an update's).
template <class S>
struct spec_expression;
template <class X, bool B, bool I>
struct spec_expression<Out<X, B, I>> {
  using type = X;
};
template <class T, class X>
struct spec_expression<update_spec<T, X>> {
  using type = X;
};
template <class S>
using spec_expression_t = typename spec_expression<S>::type;

/// A spec whose reductions read from memory the operands Set keeps
/// (rewrite/kept_operands.hpp); the same spec where there are none.
template <class Set, class S>
struct kept_spec {
  using type = S;
  static const S& from(const S& s) { return s; }
};
template <class Set, class X, bool B, bool I>
  requires(keep::changes<Set, X>::value)
struct kept_spec<Set, Out<X, B, I>> {
  using type = Out<keep::keep_operands_t<Set, X>, B, I>;
  static type from(const Out<X, B, I>& o) { return type(keep::keep_operands<Set>(o.expression)); }
};
template <class Set, class T, class X>
  requires(keep::changes<Set, X>::value)
struct kept_spec<Set, update_spec<T, X>> {
  using type = update_spec<T, keep::keep_operands_t<Set, X>>;
  static type from(const update_spec<T, X>& u) {
    return type{u.variable, keep::keep_operands<Set>(u.expression), u.region, u.partial};
  }
};
template <class Set, class S>
using kept_spec_t = typename kept_spec<Set, S>::type;

/// The specs a function holds, from those it was given: fusor's stable
/// rewrites, then the reductions of operands its products keep (`Set`, found
/// from all its outputs and updates: function_set_t).
template <class Set, class S>
using function_spec_t = kept_spec_t<Set, stable_spec_t<S>>;
template <class... S>
using function_set_t = keep::products_in<spec_expression_t<stable_spec_t<S>>...>;
/// A group of specs converted to deduced types P...: the operands P... keep
/// are found again from P... alone.
template <class... P>
using deduced_set_t = keep::kept_in<spec_expression_t<P>...>;
template <class P, class S, class Set>
inline constexpr bool deduced_from_v = std::is_same_v<P, function_spec_t<Set, S>>;
}  // namespace detail

template <class... O>
struct outputs_t {
  detail::operand_tuple<O...> items;
  /// The outputs with fusor's stable rewrites applied (a function's default).
  template <class... P>
    requires(sizeof...(P) == sizeof...(O) && (detail::deduced_from_v<P, O, detail::deduced_set_t<P...>> && ...) &&
             !(std::is_same_v<P, O> && ...))
  operator outputs_t<P...>() const {  // NOLINT: the conversion a function's deduction asks for
    using set = detail::deduced_set_t<P...>;
    return fusor::detail::apply(
        [](const auto&... o) {
          return outputs_t<P...>{detail::operand_tuple<P...>(
              detail::kept_spec<set, detail::stable_spec_t<O>>::from(detail::stable_from(o))...)};
        },
        items);
  }
};
template <class... U>
struct updates_t {
  detail::operand_tuple<U...> items;
  template <class... P>
    requires(sizeof...(P) == sizeof...(U) && (detail::deduced_from_v<P, U, detail::deduced_set_t<P...>> && ...) &&
             !(std::is_same_v<P, U> && ...))
  operator updates_t<P...>() const {  // NOLINT: the conversion a function's deduction asks for
    using set = detail::deduced_set_t<P...>;
    return fusor::detail::apply(
        [](const auto&... u) {
          return updates_t<P...>{detail::operand_tuple<P...>(
              detail::kept_spec<set, detail::stable_spec_t<U>>::from(detail::stable_from(u))...)};
        },
        items);
  }
};

/// A replacement made when the function is built (Theano's `givens`): every
/// read of `target` — a symbolic input or a shared variable — in the
/// function's outputs and update expressions reads `replacement` instead.
/// The replacement itself is taken as written (a given does not rewrite
/// another given's replacement), so `given(w, w * 2)` reads the variable w
/// doubled. An update *of* a replaced shared variable still updates it.
template <class Target, class X>
struct given_spec {
  Target target;
  X replacement;
};

namespace detail {
template <class Target>
struct given_target;
template <class T, int N>
struct given_target<input<T, N>> {
  using element = T;
  static constexpr int rank = N;
};
template <class T>
struct given_target<shared<T>> {
  using element = element_type_of<T>;
  static constexpr int rank = rank_of<T>;
};
}  // namespace detail

/// `fusor::given(x, expression)`: see given_spec. The replacement must have
/// the target's dtype (convert it with fusor::cast<E>) and its rank.
template <class Target, class Y>
[[nodiscard]] auto given(const Target& target, Y&& replacement) {
  using X = as_expression_t<Y>;
  using info = detail::given_target<Target>;
  static_assert(std::is_same_v<value_type_t<X>, typename info::element>,
                "FUSOR_GIVEN_DTYPE_MISMATCH: a replacement in fusor::given(target, replacement) must have the "
                "target's dtype exactly (Theano's rule); convert it with fusor::cast<E>(...)");
  static_assert(info::rank == dynamic_rank || X::rank == dynamic_rank || X::rank == info::rank,
                "FUSOR_RANK_MISMATCH: a replacement in fusor::given(target, replacement) must have the target's rank");
  return given_spec<Target, X>{target, FUSOR_AS_EXPRESSION(replacement)};
}

namespace detail {
template <class Target, class X>
struct stable_spec<given_spec<Target, X>> {
  using type = given_spec<Target, stabilized_t<X>>;
  static type from(const given_spec<Target, X>& g) { return type{g.target, stabilize(g.replacement)}; }
};
}  // namespace detail

template <class... G>
struct givens_t {
  detail::operand_tuple<G...> items;
  template <class... P>
    requires(sizeof...(P) == sizeof...(G) && (std::is_same_v<P, detail::stable_spec_t<G>> && ...) &&
             !(std::is_same_v<P, G> && ...))
  operator givens_t<P...>() const {  // NOLINT: the conversion a function's deduction asks for
    return fusor::detail::apply([](const auto&... g) { return givens_t<P...>{detail::operand_tuple<P...>(detail::stable_spec<G>::from(g)...)}; }, items);
  }
};

/// The function's replacements: fusor::given(target, replacement)...
template <class... G>
[[nodiscard]] auto givens(G&&... g) {
  return givens_t<std::remove_cvref_t<G>...>{detail::operand_tuple<std::remove_cvref_t<G>...>(FUSOR_FORWARD(g)...)};
}

/// The function's explicit inputs, in call order: symbolic inputs or In(...).
template <class... X>
[[nodiscard]] auto inputs(X&&... x) {
  static_assert((detail::is_in_v<typename detail::as_in<std::remove_cvref_t<X>>::type> && ...),
                "fusor::inputs: every argument must be a symbolic input (scalar<T>, vector<T>, matrix<T>, "
                "tensor<T, N>) or In(input[, fusor::borrow]); shared variables are implicit inputs and are not "
                "listed (R40)");
  using items_t = detail::operand_tuple<typename detail::as_in<std::remove_cvref_t<X>>::type...>;
  return inputs_t<typename detail::as_in<std::remove_cvref_t<X>>::type...>{items_t(FUSOR_FORWARD(x)...)};
}
/// The function's outputs: expressions, shared variables or Out(...).
template <class... X>
[[nodiscard]] auto outputs(X&&... x) {
  using items_t = detail::operand_tuple<typename detail::as_out<std::remove_cvref_t<X>>::type...>;
  return outputs_t<typename detail::as_out<std::remove_cvref_t<X>>::type...>{items_t(FUSOR_FORWARD(x)...)};
}
/// The function's updates: fusor::update(variable, expression)...
template <class... U>
[[nodiscard]] auto updates(U&&... u) {
  return updates_t<std::remove_cvref_t<U>...>{detail::operand_tuple<std::remove_cvref_t<U>...>(FUSOR_FORWARD(u)...)};
}

}  // namespace fusor
