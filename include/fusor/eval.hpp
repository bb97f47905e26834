// fusor/eval.hpp — evaluating an expression once, and into a shared variable.
//
//   fusor::matrix<float> x{"x"};
//   auto W = fusor::shared(xt::xtensor<float, 2>(...), "W");
//   xt::xtensor<float, 2> y = fusor::eval(2.0f * x + fusor::exp(W), x = xv);
//   fusor::assign(W, W - 0.1f * x, x = xv);    // in place when that is safe
//
// Both go through the planner of compiled functions (an eval is a function of
// one output, an assign a function of one update), so they follow the same
// rules: the same fusion, the same argument checks, the same in-place policy.
// The graph and its plans are kept per expression type and thread, and reused
// while the expression's leaves (its shared variables, inputs and constants)
// and the call's facts are the same: `assign(o, a * b + c)` in a loop plans
// once.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/function.hpp"
#include "fusor/expr/key.hpp"
#include "fusor/expr/visit.hpp"
#include "fusor/shared.hpp"

namespace fusor {

namespace detail {

/// Checks a value bound with `x = value` for its input and describes it (the
/// value's C++ type is gone by now: its dtype decides the casting check).
template <class T, int N>
input_facts bind_value(const binding<T, N>& b) {
  auto who = [&] { return "input '" + b.target.str() + "'"; };
  input_facts a;
  a.shape = b.shape;
  std::uint32_t broadcastable = 0;
  for (int d = 0; d < N; ++d)
    if (b.target.broadcastable(static_cast<std::size_t>(d))) broadcastable |= 1u << d;
  require_shape(who, static_cast<std::size_t>(N), broadcastable, a.shape, b.source_dtype);
  const std::size_t n = a.shape.elements();
  if (!host_accessible(b.space) && b.source_dtype != dtype_of<T>)
    throw dtype_error(who() + ": a value on " + b.space.str() + " must have the input's dtype " +
                      std::string(name(dtype_of<T>)) + ", received " + std::string(name(b.source_dtype)));
  visit(b.source_dtype, [&](auto zero) {
    using S = decltype(zero);
    check_cast<T, S>(who, static_cast<const S*>(b.data), n, false, cast_policy{});
  });
  a.data = static_cast<const std::byte*>(b.data);
  a.bytes = b.layout.strided ? b.bytes : n * size_of(b.source_dtype);
  a.source = b.source_dtype;
  a.space = b.space;
  a.layout = b.layout;
  return a;
}

/// The graph and plans of one expression type, for one thread.
struct evaluation {
  program prog;
  std::vector<std::uint64_t> key, probe;
  call_facts facts;
  bool built = false;

  /// Arenas above this size are given back after the call: an eval does not
  /// keep a large temporary alive for the rest of the thread.
  static constexpr std::size_t keep_arena_bytes = std::size_t{1} << 20;

  /// Out of line (impl/eval.ipp): its plans' and tables' destructors are
  /// compiled once, not in every unit that evaluates.
  FUSOR_RUNTIME ~evaluation();
};

/// Finds each graph input's value among the bindings.
template <class... B>
void bind_inputs(const graph& g, call_facts& facts, const B&... bindings) {
  facts.inputs.resize(g.inputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    bool found = false;
    (
        [&] {
          if (!found && bindings.target.id() == g.inputs[i].id) {
            facts.inputs[i] = bind_value(bindings);
            found = true;
          }
        }(),
        ...);
    if (!found)
      throw value_error("fusor::eval: no value was given for input '" + g.inputs[i].name + "' (bind one with " +
                        g.inputs[i].name + " = value)");
  }
}

/// What an eval or an assign adds to its fresh graph (its expression, and its
/// output or update): a function and its context, so that `build` is one
/// function rather than one per expression type.
struct graph_adder {
  void (*call)(void* context, graph& g, graph_builder_t& b) = nullptr;
  void* context = nullptr;

  /// An adder that calls `f(g, b)`; f must outlive the adder.
  template <class F>
  static graph_adder to(F& f) noexcept {
    return {[](void* c, graph& g, graph_builder_t& b) { (*static_cast<F*>(c))(g, b); }, &f};
  }
};

// The type-independent steps of an eval or an assign (impl/eval.ipp), in call
// order: what remains in the templates below is what needs the expression's
// and the arguments' types (its graph, the arguments' checks, the result).

/// Builds an evaluation's graph (the host's kernels, the device's keys), then
/// points it at the space of its shared variables.
FUSOR_RUNTIME void build(evaluation& ev, const char* who, graph_adder add);

/// The plan for a call whose inputs are bound: the spaces checked, the shared
/// variables' facts read, the plan found or built, the slots pointed at this
/// call's memory (the output's and a spare's are the caller's to set).
FUSOR_RUNTIME program::entry& plan_evaluation(evaluation& ev);

/// Runs the plan of an eval, its output written to `host_out` (`bytes`): on
/// the host in place, on a device into a buffer there, copied back. Then
/// finish_evaluation.
FUSOR_RUNTIME void run_evaluation(evaluation& ev, program::entry& e, void* host_out, std::size_t bytes);

/// After a call ran: the random streams' counters advanced, a large arena
/// given back.
FUSOR_RUNTIME void finish_evaluation(evaluation& ev);

/// fusor::assign of an expression of the variable's dtype: a function of one
/// update (of all of the variable, or with `region`, of a view of it).
template <class T, class Expr, class... B>
void assign_planned(const shared<T>& dest, const Expr& expr, const view_spec* region, const B&... bindings) {
  using E = element_type_of<T>;
  auto& record = *dest.record();
  thread_local evaluation ev;
  ev.probe.clear();
  graph_key(expr, ev.probe);
  ev.probe.push_back(dest.id());
  if (region) region->append_key(ev.probe);
  else ev.probe.push_back(~std::uint64_t{0});
  if (!ev.built || ev.probe != ev.key) {
    auto add = [&](graph& g, graph_builder_t& b) {
      graph_update u;
      u.node = b.add_root(expr);
      u.variable = b.add_shared(dest);
      u.broadcastable = record.broadcastable_mask();
      if (region) {
        u.partial = true;
        u.region = *region;
      }
      g.updates.push_back(u);
    };
    build(ev, "fusor::assign", graph_adder::to(add));
  }
  const collective_scope collectives(ev.prog.graph().collectives);
  bind_inputs(ev.prog.graph(), ev.facts, bindings...);
  auto& entry = plan_evaluation(ev);
  const update_plan& u = entry.plan.updates[0];
  array<E> fresh;
  if (!u.in_place) {
    fresh = array<E>::allocate(u.shape, dest.space());
    ev.prog.slot(u.spare) = fresh.mutable_data();
    entry.prepared->spares_replaced();  // (a new buffer, maybe where the variable's old one was)
  }
  ev.prog.run(entry, nullptr);
  if (u.in_place) record.written_in_place();
  else record.install(FUSOR_MOVE(fresh));
  finish_evaluation(ev);
}

}  // namespace detail

/// Evaluates `expr` once into a fresh value, with `input = value` bindings.
template <class X, class... B>
  requires(expression<as_expression_t<X>>)
[[nodiscard]] auto eval(X&& x, const B&... bindings) {
  auto expr = stabilize(FUSOR_AS_EXPRESSION(x));  // rewrite/stable.hpp
  using Expr = decltype(expr);
  thread_local detail::evaluation ev;
  ev.probe.clear();
  detail::graph_key(expr, ev.probe);
  if (!ev.built || ev.probe != ev.key) {
    auto add = [&](graph& g, detail::graph_builder_t& b) {
      g.outputs.push_back(graph_output{b.add_root(expr), false, false, false});
    };
    detail::build(ev, "fusor::eval", detail::graph_adder::to(add));
  }
  const collective_scope collectives(ev.prog.graph().collectives);
  detail::bind_inputs(ev.prog.graph(), ev.facts, bindings...);
  auto& entry = detail::plan_evaluation(ev);
  const dims& shape = entry.plan.outputs[0].shape;
  auto out = detail::make_result<Expr>(shape);
  detail::run_evaluation(ev, entry, detail::result_data(out), shape.elements() * sizeof(value_type_t<Expr>));
  return out;
}

/// Evaluates `expr` into the shared variable `dest`. Writes into dest's buffer
/// in place when the planner proves it safe (the result has dest's shape and
/// dtype, every read of that buffer is at the index being written, and no
/// view the caller holds shares it); otherwise evaluates into fresh storage
/// and installs it. Either way the result is the one a separate temporary
/// would give; on error dest is unchanged.
template <class T, class X, class... B>
  requires(tensor_shareable<T> && expression<as_expression_t<X>>)
void assign(shared<T>& dest, X&& x, const B&... bindings) {
  using E = element_type_of<T>;
  auto expr = stabilize(FUSOR_AS_EXPRESSION(x));  // rewrite/stable.hpp
  using Expr = decltype(expr);
  using R = value_type_t<Expr>;
  static_assert(rank_of<T> == dynamic_rank || rank_v<Expr> == dynamic_rank || rank_of<T> == rank_v<Expr>,
                "FUSOR_RANK_MISMATCH: fusor::assign: the expression's static rank differs from the destination "
                "variable's; a shared variable's rank never changes (reduce, reshape or index the expression)");
  auto& record = *dest.record();
  if constexpr (!std::is_same_v<R, E>) {
    // Another dtype: the variable's casting rules decide (R28), as set_value.
    auto value = fusor::eval(expr, bindings...);
    const dims shape = [&] {
      if constexpr (rank_v<Expr> == 0) return dims{};
      else return dims::from(value.shape());
    }();
    require_shape([&] { return record.describe(); }, record.rank(), record.broadcastable_mask(), shape, dtype_of<R>);
    const R* src = detail::result_data(value) ? static_cast<const R*>(detail::result_data(value)) : nullptr;
    check_cast<E, R>([&] { return record.describe(); }, src, shape.elements(), false,
                     cast_policy{dest.strict(), dest.allow_downcast()});
    auto fresh = array<E>::allocate(shape, host);
    for (std::size_t i = 0; i < shape.elements(); ++i) fresh.mutable_data()[i] = convert_element<E>(src[i]);
    record.install(host_accessible(dest.space()) ? FUSOR_MOVE(fresh) : fresh.to(dest.space()));
  } else {
    detail::assign_planned(dest, expr, nullptr, bindings...);
  }
}

/// Evaluates `expr` into part of a shared variable: afterwards
/// `view(u, items...)` holds it (broadcast to the view's shape) and the rest
/// of u keeps its value — NumPy's `u[items] = expr`. The expression may read
/// u anywhere (shifted, as a stencil does): it sees u's values from before
/// the assignment. Written into u's buffer when every read of u is at the
/// index written; otherwise into a fresh buffer, which u then holds (the
/// rest of u is copied there first). A C++ number is a weak scalar of u's
/// dtype: `assign(view(u, 0), 0)`.
template <class L, int N, class X, class... B>
  requires(is_basic_shared_leaf_v<L> && operand<X>)
void assign(const view_node<L, N>& dest, X&& x, const B&... bindings) {
  using E = typename L::value_type;
  auto expr = stabilize(detail::update_expression<E>(FUSOR_FORWARD(x)));  // rewrite/stable.hpp
  static_assert(std::is_same_v<value_type_t<decltype(expr)>, E>,
                "FUSOR_UPDATE_DTYPE_MISMATCH: fusor::assign into a view: the expression must have the variable's "
                "dtype; convert it with fusor::cast<E>(...)");
  static_assert(N == dynamic_rank || rank_v<decltype(expr)> == dynamic_rank || rank_v<decltype(expr)> <= N,
                "FUSOR_RANK_MISMATCH: fusor::assign into a view: the expression must broadcast to the view (of "
                "the view's rank or less)");
  detail::assign_planned(dest.arg().variable(), expr, &dest.spec(), bindings...);
}

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/impl/eval.ipp"
#endif
