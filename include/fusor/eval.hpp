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

/// Builds an evaluation's graph (the host's kernels, the device's keys), then points it at
/// the space of its shared variables.
template <class Add>
void build(evaluation& ev, const char* who, Add&& add) {
  ev.built = false;
  ev.prog = program{};
  graph& g = ev.prog.graph();
  graph_builder<cpu::backend, gpu::keyed_backend> b(g);
  add(g, b);
  ev.facts.space = space_of_graph(g, who);
  ev.facts.backend = host_accessible(ev.facts.space) ? backend_id::host : backend_id::device;
  target(ev.prog, ev.facts.space, who);
  ev.key = ev.probe;
  ev.built = true;
}

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
  if (!ev.built || ev.probe != ev.key)
    build(ev, "fusor::assign", [&](graph& g, auto& b) {
      graph_update u;
      u.node = b.add_root(expr);
      u.variable = b.add_shared(dest);
      u.broadcastable = record.broadcastable_mask();
      if (region) {
        u.partial = true;
        u.region = *region;
      }
      g.updates.push_back(u);
    });
  const collective_scope collectives(ev.prog.graph().collectives);
  bind_inputs(ev.prog.graph(), ev.facts, bindings...);
  check_spaces(ev.facts, ev.prog.graph());
  read_shared_facts(ev.prog.graph(), ev.facts);
  auto& entry = ev.prog.plan_for(ev.facts);
  const update_plan& u = entry.plan.updates[0];
  ev.prog.bind_slots(entry, ev.facts);
  array<E> fresh;
  if (!u.in_place) {
    fresh = array<E>::allocate(u.shape, dest.space());
    ev.prog.slot(u.spare) = fresh.mutable_data();
  }
  ev.prog.run(entry, nullptr, [](const step_info&) {});
  if (u.in_place) record.written_in_place();
  else record.install(std::move(fresh));
  advance_counters(ev.prog.graph());
  if (ev.prog.arena_bytes() > evaluation::keep_arena_bytes) ev.prog.release_arena();
}

}  // namespace detail

/// Evaluates `expr` once into a fresh value, with `input = value` bindings.
template <class X, class... B>
  requires(expression<as_expression_t<X>>)
[[nodiscard]] auto eval(X&& x, const B&... bindings) {
  auto expr = stabilize(as_expression(std::forward<X>(x)));  // rewrite/stable.hpp
  using Expr = decltype(expr);
  thread_local detail::evaluation ev;
  ev.probe.clear();
  detail::graph_key(expr, ev.probe);
  if (!ev.built || ev.probe != ev.key)
    detail::build(ev, "fusor::eval", [&](graph& g, auto& b) {
      g.outputs.push_back(graph_output{b.add_root(expr), false, false, false});
    });
  const collective_scope collectives(ev.prog.graph().collectives);
  detail::bind_inputs(ev.prog.graph(), ev.facts, bindings...);
  check_spaces(ev.facts, ev.prog.graph());
  read_shared_facts(ev.prog.graph(), ev.facts);
  auto& entry = ev.prog.plan_for(ev.facts);
  ev.prog.bind_slots(entry, ev.facts);
  const dims& shape = entry.plan.outputs[0].shape;
  auto out = detail::make_result<Expr>(shape);
  array<value_type_t<Expr>> on_device;  // on a device: computed there, copied back
  if (host_accessible(ev.facts.space)) {
    ev.prog.slot(entry.plan.outputs[0].slot) = detail::result_data(out);
  } else {
    on_device = array<value_type_t<Expr>>::allocate(shape, ev.facts.space);
    ev.prog.slot(entry.plan.outputs[0].slot) = on_device.mutable_data();
  }
  ev.prog.run(entry, nullptr, [](const step_info&) {});
  if (!host_accessible(ev.facts.space))
    copy_bytes(detail::result_data(out), host, on_device.data(), ev.facts.space, on_device.bytes());
  advance_counters(ev.prog.graph());
  if (ev.prog.arena_bytes() > detail::evaluation::keep_arena_bytes) ev.prog.release_arena();
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
  auto expr = stabilize(as_expression(std::forward<X>(x)));  // rewrite/stable.hpp
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
    record.install(host_accessible(dest.space()) ? std::move(fresh) : fresh.to(dest.space()));
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
template <auto Tag, int N, class X, class... B>
  requires(operand<X>)
void assign(const view_node<basic_shared_leaf<Tag>, N>& dest, X&& x, const B&... bindings) {
  using E = typename basic_shared_leaf<Tag>::value_type;
  auto expr = stabilize(detail::update_expression<E>(std::forward<X>(x)));  // rewrite/stable.hpp
  static_assert(std::is_same_v<value_type_t<decltype(expr)>, E>,
                "FUSOR_UPDATE_DTYPE_MISMATCH: fusor::assign into a view: the expression must have the variable's "
                "dtype; convert it with fusor::cast<E>(...)");
  static_assert(N == dynamic_rank || rank_v<decltype(expr)> == dynamic_rank || rank_v<decltype(expr)> <= N,
                "FUSOR_RANK_MISMATCH: fusor::assign into a view: the expression must broadcast to the view (of "
                "the view's rank or less)");
  detail::assign_planned(dest.arg().variable(), expr, &dest.spec(), bindings...);
}

}  // namespace fusor
