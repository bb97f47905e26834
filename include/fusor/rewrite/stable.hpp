// fusor/rewrite/stable.hpp — numerically stable rewrites, applied to an
// expression's type before it is planned (PyTensor's stabilization rewrites,
// done by the C++ compiler):
//
//   log(sigmoid(x))        ->  -softplus(-x)
//   log(1 - sigmoid(x))    ->  -softplus(x)
//   log(1 + x), log(x + 1) ->  log1p(x)
//   exp(x) - 1             ->  expm1(x)
//   log(exp(x))            ->  x
//   log(sum(exp(x), ...))  ->  m + log(sum(exp(x - m), ...)), m the maximum
//
// A function applies them to its outputs, updates and givens, eval and assign
// to their expression, fusor::grad to the cost it differentiates (so that the
// gradient of log(sigmoid(x)) is the stable one); f.plan() shows the result.
// fusor::function(fusor::no_rewrites, ...) builds the expressions as written.
//
// The number in `1 - sigmoid(x)`, `1 + x` and `exp(x) - 1` is a C++ constant
// whose value is known when the expression is built, not from its type: the
// rewrite keeps both forms and a gate (expr/shape_like.hpp) picks one then,
// so only the chosen form reaches the plan. The other form is marked as
// written (fn::as_written): rewriting stops there, so stabilizing twice gives
// the same expression.
#pragma once

#include <array>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/operands.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/softmax.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/view.hpp"

namespace fusor {

/// The tag of fusor::function(fusor::no_rewrites, ...): expressions as written.
struct no_rewrites_t {
  explicit constexpr no_rewrites_t(int) {}
};
inline constexpr no_rewrites_t no_rewrites{0};

namespace detail::rewrite {

class rebuilt_refs;
template <class X>
auto stabilize(const X& e, rebuilt_refs& refs);

template <class X>
auto as_written(const X& x) {
  using T = value_type_t<X>;
  return map_t<fn::as_written, T, type_list<T>, X>(x);
}
/// `a` when `first`, else `b`: the choice made now, only its form in the plan.
template <class A, class B>
auto choose(bool first, const A& a, const B& b) {
  return detail::gated(a, first) + detail::gated(as_written(b), !first);
}
template <class X>
bool is_one(const X& c) {
  return c.value() == 1;
}

template <class X, class F>
inline constexpr bool is_map_of_v = false;
template <class F, class S, class... A>
inline constexpr bool is_map_of_v<map_node<F, S, A...>, F> = true;


// ---------------------------------------------------------------- rebuilding, operands first

/// The references (ref_node) one stabilize call has rebuilt, by their
/// target: a target that several references share is rebuilt once, and its
/// references share the rebuilt one, as they shared the original. (Rebuilt
/// once per reference, a gradient's tree was stabilized as if written out:
/// its adjoints refer to each other, and a second derivative through an
/// operation read twice took 3.4 s at -O2, a minute under the sanitizers.)
/// A reference's type decides its rebuilt type, and a target is one object,
/// held by references of one type: its address is the key.
class rebuilt_refs {
 public:
  rebuilt_refs() = default;
  rebuilt_refs(const rebuilt_refs&) = delete;
  rebuilt_refs& operator=(const rebuilt_refs&) = delete;
  ~rebuilt_refs() {
    for (auto& [target, done] : done_) done.destroy(done.node);
  }

  /// The reference `e` rebuilt: make() the first time its target is met.
  template <class Ref, class Make>
  auto rebuilt(const Ref& e, Make&& make) {
    using R = decltype(make());
    const void* const target = &e.target();
    if (const auto it = done_.find(target); it != done_.end()) return *static_cast<const R*>(it->second.node);
    R r = make();
    auto* kept = new R(r);
    try {
      done_.emplace(target, entry{kept, [](void* node) noexcept { delete static_cast<R*>(node); }});
    } catch (...) {
      delete kept;
      throw;
    }
    return r;
  }

 private:
  struct entry {
    void* node;
    void (*destroy)(void*) noexcept;
  };
  std::unordered_map<const void*, entry> done_;
};

/// A held sub-expression, stabilized when it is a value operand (the node
/// protocol lists those first, expr/node.hpp); one read for its shape only, as
/// it is.
template <bool Operand, class H>
auto stabilized_if(const H& h, rebuilt_refs& refs) {
  if constexpr (Operand) return stabilize(h, refs);
  else return h;
}
/// A node remade over its stabilized operands (a map as written is not
/// looked into).
template <class X>
auto rebuild(const X& e, rebuilt_refs& refs) {
  if constexpr (X::operand_types::size == 0 || is_map_of_v<X, fn::as_written>) {
    return e;  // leaves, the nodes that read only shapes, and what is as written
  } else {
    constexpr std::size_t operands = X::operand_types::size;
    const auto& held = e.held();
    return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
      return e.remake(stabilized_if<(K < operands)>(detail::get<K>(held), refs)...);
    }(detail::indices_of<decltype(held)>);
  }
}
/// The rules, at one node whose operands are stabilized already; `e` as it
/// is when no rule applies.
template <class X>
auto rule(const X& e) {
  if constexpr (is_map_of_v<X, fn::log_op>) {
    using A = std::tuple_element_t<0, std::remove_cvref_t<decltype(e.args())>>;
    const A& a = detail::get<0>(e.args());
    using R = value_type_t<X>;
    if constexpr (is_map_of_v<A, fn::sigmoid>) {  // log(sigmoid(x)) -> -softplus(-x)
      return as_dtype<R>(-softplus(-detail::get<0>(a.args())));
    } else if constexpr (is_map_of_v<A, fn::exp_op>) {  // log(exp(x)) -> x
      return as_dtype<R>(detail::get<0>(a.args()));
    } else if constexpr (is_map_of_v<A, fn::minus>) {
      using L = std::tuple_element_t<0, std::remove_cvref_t<decltype(a.args())>>;
      using S = std::tuple_element_t<1, std::remove_cvref_t<decltype(a.args())>>;
      if constexpr (is_constant_v<L> && is_map_of_v<S, fn::sigmoid>) {  // log(1 - sigmoid(x)) -> -softplus(x)
        const auto& x = detail::get<0>(detail::get<1>(a.args()).args());
        return choose(is_one(detail::get<0>(a.args())), as_dtype<R>(-softplus(x)), e);
      } else {
        return e;
      }
    } else if constexpr (is_map_of_v<A, fn::plus>) {  // log(1 + x), log(x + 1) -> log1p(x)
      using L = std::tuple_element_t<0, std::remove_cvref_t<decltype(a.args())>>;
      using Rt = std::tuple_element_t<1, std::remove_cvref_t<decltype(a.args())>>;
      if constexpr (is_constant_v<L> && !is_constant_v<Rt>)
        return choose(is_one(detail::get<0>(a.args())), as_dtype<R>(log1p(detail::get<1>(a.args()))), e);
      else if constexpr (is_constant_v<Rt> && !is_constant_v<L>)
        return choose(is_one(detail::get<1>(a.args())), as_dtype<R>(log1p(detail::get<0>(a.args()))), e);
      else return e;
    } else if constexpr (detail::has<detail::member::operation, A> && !detail::has<detail::member::like, A>) {
      // log(sum(exp(x), ...)) -> the max-shifted log-sum-exp
      if constexpr (std::is_same_v<typename A::operation, red::sum> && is_map_of_v<std::remove_cvref_t<decltype(a.arg())>, fn::exp_op>) {
        const auto& x = detail::get<0>(a.arg().args());
        using XT = std::remove_cvref_t<decltype(x)>;
        if constexpr (std::is_floating_point_v<value_type_t<XT>>) {
          return as_dtype<R>(stable_logsumexp<A::rank>(x, a.axes(), a.axis_count(), a.keeps_dims()));
        } else {
          return e;
        }
      } else {
        return e;
      }
    } else {
      return e;
    }
  } else if constexpr (is_map_of_v<X, fn::minus>) {  // exp(x) - 1 -> expm1(x)
    using L = std::tuple_element_t<0, std::remove_cvref_t<decltype(e.args())>>;
    using Rt = std::tuple_element_t<1, std::remove_cvref_t<decltype(e.args())>>;
    if constexpr (is_map_of_v<L, fn::exp_op> && is_constant_v<Rt>) {
      using R = value_type_t<X>;
      return choose(is_one(detail::get<1>(e.args())), as_dtype<R>(expm1(detail::get<0>(detail::get<0>(e.args()).args()))), e);
    } else {
      return e;
    }
  } else {
    return e;
  }
}

/// Whether a rule may apply at node X: a log of anything (the rules look at
/// its operand), or exp(x) minus a constant. A tree without such a node is
/// its own stable form, and is returned as it is without being rebuilt (most
/// expressions: the rebuild would instantiate a copy of every node type).
template <class X>
struct rule_may_apply : std::bool_constant<is_map_of_v<X, fn::log_op>> {};
template <class S, class L, class Rt>
struct rule_may_apply<map_node<fn::minus, S, L, Rt>>
    : std::bool_constant<is_map_of_v<L, fn::exp_op> && is_constant_v<Rt>> {};

/// (No rule applies at a reference itself: at its target.)
template <class X>
auto stabilize(const X& e, rebuilt_refs& refs) {
  if constexpr (!any_node<rule_may_apply, X>::value) return e;
  else if constexpr (is_ref_v<X>) return refs.rebuilt(e, [&] { return rebuild(e, refs); });
  else return rule(rebuild(e, refs));
}
template <class X>
auto stabilize(const X& e) {
  if constexpr (!any_node<rule_may_apply, X>::value) {
    return e;
  } else {
    rebuilt_refs refs;
    return stabilize(e, refs);
  }
}

}  // namespace detail::rewrite

/// The expression with fusor's stable rewrites applied (see the file
/// comment): what a function plans for it. Printing it shows what changed.
template <class X>
  requires std::derived_from<std::remove_cvref_t<X>, expression_base>
[[nodiscard]] auto stabilize(const X& e) {
  return detail::rewrite::stabilize(e);
}
template <class X>
using stabilized_t = decltype(detail::rewrite::stabilize(std::declval<const X&>()));

}  // namespace fusor
