// fusor/function.hpp — compiled functions (Theano's theano.function):
//
//   auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)),
//                            fusor::outputs(fusor::Out(y, fusor::borrow)),
//                            fusor::updates(fusor::update(W, W - 0.1f * y)));
//   auto r = f(xv);   // one output -> its value; several -> std::tuple
//
// The function is an orchestrator. Building it flattens its outputs and
// updates into a graph (compile/graph.hpp). A call
//   1. binds the arguments (compile/binding.hpp) and reads the shared
//      variables' facts;
//   2. takes the plan built for these facts, or builds one (compile/
//      planner.hpp): shapes, steps, slots, in-place decisions — see f.plan();
//   3. provides the memory the plan writes: the outputs, the spare buffers of
//      updates not written in place (the buffer the variable held before:
//      ping-pong, no allocation);
//   4. runs the steps (backend/cpu, or backend/gpu when its shared
//      variables live on a device): everything that can fail — a check, an
//      allocation, a shape error — has happened before the first in-place
//      write, and a borrowed output's earlier views are made stale before
//      its buffer is rewritten;
//   5. commits: installs the updates not written in place, hands buffers over
//      ({A: B, B: A} swaps without copying). Nothing here throws.
// A call that throws changes no shared variable and no lent argument.
//
// Every output and update is computed from the values the variables had when
// the call began (simultaneous assignment, R57). With borrowed outputs, or
// none, a steady-state call allocates nothing.
//
// Thread safety: a function object must not be called from two threads at
// once (a concurrent call throws fusor::error). Distinct functions may run
// concurrently when they update no common shared variable and no thread
// changes a variable another function reads.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "fusor/core/apply.hpp"
#include "fusor/backend/cpu/backend.hpp"
#include "fusor/backend/gpu/backend.hpp"
#include "fusor/compile/binding.hpp"
#include "fusor/compile/borrowed_output.hpp"
#include "fusor/compile/graph.hpp"
#include "fusor/compile/profile.hpp"
#include "fusor/compile/program.hpp"
#include "fusor/compile/specs.hpp"
#include "fusor/expr/substitute.hpp"
#include "fusor/expr/visit.hpp"

namespace fusor {

/// Bytes a function holds (f.memory()).
struct memory_report {
  memory_space space = host;          ///< where the arena and the output buffers are
  std::size_t arena_bytes = 0;        ///< the temporaries' arena, kept across calls
  std::size_t temporary_bytes = 0;    ///< of which the last call's plan uses
  std::size_t output_bytes = 0;       ///< output buffers and spare update buffers (in `space`)
  std::size_t host_bytes = 0;         ///< on a device: host copies of borrowed outputs
  std::size_t arena_allocations = 0;  ///< arena allocations since construction (a steady state adds none)
};

namespace detail {

/// K as a value whose type carries it (`std::get<k>` of a generic lambda's
/// `auto k`). The function's loops over its inputs, outputs and updates are
/// expanded in place,
///
///   auto add_output = [&](auto k) { ... };
///   [&]<std::size_t... K>(std::index_sequence<K...>) { (add_output(index_c<K>), ...); }(...);
///
/// rather than handed to a helper taking the lambda (for_each_index<N>(f)):
/// that helper's every instance is named by its lambda's type, so by the
/// whole function type, in the debug information — about 9 MB of a
/// perceptron's gradient unit at -O0 -g (core/operand_tuple.hpp, indices_of).
template <std::size_t K>
inline constexpr std::integral_constant<std::size_t, K> index_c{};

template <class R, int N>
struct eval_result {
  using type = xt::xtensor<R, static_cast<std::size_t>(N)>;
};
template <class R>
struct eval_result<R, 0> {
  using type = R;
};
template <class R>
struct eval_result<R, dynamic_rank> {
  using type = xt::xarray<R>;
};

/// A fresh value of expression X's result type and the given shape.
template <class X>
auto make_result(const dims& shape) {
  using Result = typename eval_result<value_type_t<X>, rank_v<X>>::type;
  if constexpr (rank_v<X> == 0) {
    return Result{};
  } else {
    typename Result::shape_type s{};
    if constexpr (rank_v<X> == dynamic_rank) s.resize(shape.rank());
    for (std::size_t d = 0; d < shape.rank(); ++d) s[d] = shape[d];
    return Result(s);
  }
}
template <class Result>
void* result_data(Result& r) {
  if constexpr (std::is_arithmetic_v<Result>) return &r;
  else return r.data();
}

/// A type list filtered to the plain (never in-place) outputs' expressions, as
/// the multi-output kernel's parameters.
template <class Backend, class... Xs>
const void* multi_kernel_of(std::tuple<Xs...>*) {
  if constexpr (sizeof...(Xs) < 2) return nullptr;
  else return Backend::template multi_kernel<Xs...>();
}

/// Where a graph runs: where its shared variables live (all in one space), or
/// the host when it has none. A constant (fusor::constant(array)) does not
/// decide it: the graph reads the constant's copy in that space.
FUSOR_RUNTIME memory_space space_of_graph(graph& g, const std::string& who);

/// Points a program at the backend of `space`. On a device, every kernel the
/// graph needs must have been compiled into the program (by a unit that asked
/// for a device; on a real device with its CUDA launchers): a missing one is
/// reported now, naming the expressions, rather than at a call.
FUSOR_RUNTIME void target(program& prog, const memory_space& space, const std::string& who);

/// Where a program's graph runs (space_of_graph), recorded in the call facts,
/// and the program pointed at that space's backend (target): the last step of
/// building a function, an eval or an assign.
FUSOR_RUNTIME void place(program& prog, call_facts& facts, const std::string& who);

/// The builder every function, eval and assign adds its expressions with: the
/// host's kernels, and the device's keys (its kernels are compiled where a unit
/// asks for a device).
using graph_builder_t = graph_builder<cpu::backend, gpu::keyed_backend>;

/// The part of a compiled function that does not depend on its C++ types: its
/// program, the facts of its calls, the steady-call shortcut, profiling and
/// CUDA graphs, and the members that report on them. fusor::function derives
/// from it and adds what needs the types (the expressions, the arguments'
/// binding, the outputs and the update buffers). One class, compiled once (in
/// libfusor in the compiled-runtime mode), where each function type used to
/// compile its own copy of all of this.
class function_core {
 public:
  function_core(const function_core&) = delete;
  function_core& operator=(const function_core&) = delete;

  /// Per-kernel calls, time, bytes moved and GB/s, when profiling is on
  /// (enable_profiling(), or FUSOR_PROFILE=1 in the environment).
  /// Its trace, profile().chrome_trace(), has one event per step of each
  /// profiled call, for Perfetto or chrome://tracing.
  const profile_report& profile() const noexcept { return profile_; }
  /// Forgets what was profiled so far (the statistics and the trace).
  void reset_profile() noexcept { profile_.clear(); }
  void enable_profiling(bool on = true) noexcept { profiling_ = on; }
  bool profiling() const noexcept { return profiling_; }

  /// The plan the last call ran, printed: the shapes it was built for, its
  /// steps with the slots they read and write, the arena, and every in-place
  /// decision with its reason.
  FUSOR_RUNTIME std::string plan() const;
  /// The plan the last call ran, as data (throws before the first call).
  FUSOR_RUNTIME const fusor::plan& last_plan() const;
  /// The plan the last call ran as a Graphviz graph (plan::dot): its steps,
  /// temporaries and their arena bytes, the shared variables it reads and
  /// updates. `dot -Tsvg plan.dot -o plan.svg` draws it. Throws before the
  /// first call.
  std::string plan_dot() const { return last_plan().dot(prog_.graph()); }
  /// plan_dot() written to the file `path` (throws fusor::io_error when it
  /// cannot be).
  void write_plan_dot(const std::string& path) const {
    detail::write_text_file(path, plan_dot(), "fusor::function::write_plan_dot");
  }
  /// The graph the function was built into.
  const fusor::graph& graph() const noexcept { return prog_.graph(); }
  /// Where the function runs: where its shared variables live (the host when
  /// it has none).
  const memory_space& space() const noexcept { return facts_.space; }
  /// How many plans the function has built (one per new signature).
  std::size_t plans_built() const noexcept { return prog_.plans_built(); }

  /// CUDA graphs, opt-in: on a device, a call whose plan has run before is
  /// captured once into a graph, and later calls with the same plan and the
  /// same buffers replay it as one launch — less host time per call
  /// when a plan has several kernels. Two graphs are kept per function (an
  /// update written through a spare buffer alternates between two buffer
  /// sets). Plans that copy to or from the host inside their steps (host
  /// arguments, integer exponent checks) run as usual. Off by default; no
  /// effect on the host or while profiling.
  void enable_graphs(bool on = true) {
    graphs_on_ = on;
    if (!on) drop_graphs();
  }
  bool graphs_enabled() const noexcept { return graphs_on_; }
  /// Calls run by replaying a captured graph, and graphs captured.
  std::size_t graph_replays() const noexcept { return graph_replays_; }
  std::size_t graphs_captured() const noexcept { return graphs_captured_; }

  /// How the last call wrote update k / output k: in place or not.
  bool update_was_in_place(std::size_t k) const noexcept {
    const auto* e = prog_.current();
    return e && k < e->plan.updates.size() && e->plan.updates[k].in_place;
  }
  bool output_was_in_place(std::size_t k) const noexcept {
    const auto* e = prog_.current();
    return e && k < e->plan.outputs.size() && e->plan.outputs[k].in_place;
  }
  /// Whether the last call gave update k another updated variable's buffer.
  bool update_was_transfer(std::size_t k) const noexcept {
    const auto* e = prog_.current();
    return e && k < e->plan.updates.size() && e->plan.updates[k].transfer_from >= 0;
  }

 protected:
  function_core() = default;
  FUSOR_RUNTIME ~function_core();

  // Building (the checks' refusals are written here once, not per type).
  /// No input listed twice (the graph's inputs, as declared in call order).
  FUSOR_RUNTIME void check_inputs_distinct() const;
  /// Every given is read, and no expression reads an input beyond the
  /// function's `inputs` declared ones.
  FUSOR_RUNTIME void check_graph_reads(std::size_t inputs) const;
  [[noreturn]] FUSOR_RUNTIME static void refuse_repeated_update(const variable_base& variable);
  [[noreturn]] FUSOR_RUNTIME static void refuse_update_pattern(const variable_base& variable,
                                                              const std::string& expression,
                                                              const std::vector<bool>& got,
                                                              const std::vector<bool>& want);
  /// After the graph is built: where the function runs and its backend, the
  /// inputs' facts sized, profiling from the environment.
  FUSOR_RUNTIME void finish_build(std::size_t inputs);
  /// How a stale borrowed output k is named in its error.
  FUSOR_RUNTIME std::string output_description(std::size_t k) const;

  /// Marks a call as running for its lifetime: a second call of the same
  /// function object meanwhile (from another thread) is refused.
  class call_guard {
   public:
    FUSOR_RUNTIME explicit call_guard(std::atomic<bool>& busy);
    call_guard(const call_guard&) = delete;
    call_guard& operator=(const call_guard&) = delete;
    ~call_guard() { busy_.store(false, std::memory_order_release); }

   private:
    std::atomic<bool>& busy_;
  };

  /// The plan of a call whose arguments are bound: the last call's, with its
  /// slot table, when nothing it was made for changed (a steady call); else
  /// found in the plan cache or built, and the slots bound.
  FUSOR_RUNTIME program::entry& plan_call();
  /// Runs the plan's kernel steps (replaying a captured graph where graphs
  /// are on and the plan allows), `before` each.
  FUSOR_RUNTIME void run_steps(program::entry& e, step_hook before);

  program prog_;
  call_facts facts_;
  std::atomic<bool> busy_{false};

 private:
  /// What the last full binding saw: while the arguments are the same
  /// (same buffers, shapes, dtypes, writability), no shared variable's
  /// storage was replaced, and no view of an updated variable appeared or went
  /// away, the plan and the slot table of the last call are this call's.
  struct steady_state {
    /// A shared variable's storage version as the last full binding saw it.
    struct version_seen {
      const variable_base* record;
      std::uint64_t version;
    };
    /// Whether an updated variable was viewed then (its update in place or not).
    struct view_seen {
      bool (*viewed)(const variable_base*);
      const variable_base* record;
      bool was;
    };
    program::entry* entry = nullptr;
    std::vector<input_facts> inputs;
    // Flat copies of what steady() compares, so a steady call reads two short
    // arrays rather than the graph's shared-variable table.
    std::vector<version_seen> versions;
    std::vector<view_seen> viewed;  ///< per update
  };
  struct captured_graph {
    std::uint64_t plan = 0;
    std::vector<void*> slots;
    device_runtime* runtime = nullptr;
    void* exec = nullptr;
  };

  FUSOR_RUNTIME bool steady() const noexcept;
  /// The full path: the shared variables' facts, the plan for them (from the
  /// cache or built), the slot table.
  FUSOR_RUNTIME program::entry& replan();
  /// Runs a steady call as a graph: replays the one captured for this plan
  /// and these buffers, or captures it now. False when the plan cannot be
  /// captured (the caller then runs the steps; nothing ran here).
  FUSOR_RUNTIME bool run_as_graph(program::entry& e, step_hook before);
  FUSOR_RUNTIME void drop_graphs() noexcept;

  steady_state steady_;
  bool profiling_ = false;
  profile_report profile_;
  bool graphs_on_ = false;
  std::vector<captured_graph> graphs_;
  std::uint64_t uncapturable_plan_ = 0;
  std::size_t graph_replays_ = 0, graphs_captured_ = 0;
};

/// What a function keeps per output and per update between calls. Outside
/// the class template: a type nested in it would be named by the function's
/// whole type (which spells out every output and update expression: a
/// gradient's, hundreds of kilobytes), in the debug information of every
/// tuple and helper that holds one; here it is named by its element type, and
/// functions of the same element types share one.
template <class E>
struct output_slot {
  /// A borrowed output's buffer, reused by every call; on a device, every
  /// output's (but a fresh internal one's) buffer there.
  array<E> buffer;
  array<E> mirror;  ///< on a device: the host copy a borrowed output views
  std::shared_ptr<output_stamp> stamp = std::make_shared<output_stamp>();
};
template <class E>
struct update_slot {
  array<E> spare;  ///< the buffer the variable held before the previous call (ping-pong)
};

}  // namespace detail

/// What fusor::eval returns for an expression: its element type for rank 0,
/// xt::xtensor<E, N> for a static rank, xt::xarray<E> otherwise.
template <expression X>
using eval_result_t = typename detail::eval_result<value_type_t<X>, rank_v<X>>::type;

template <class Ins, class Outs, class Upds, class Givens = givens_t<>>
class function;

template <class... I, class... O, class... U, class... G>
class function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>> : public detail::function_core {
  static constexpr std::size_t n_in = sizeof...(I);
  static constexpr std::size_t n_out = sizeof...(O);
  static constexpr std::size_t n_upd = sizeof...(U);
  static constexpr std::size_t n_giv = sizeof...(G);
  // The indices the loops over them expand (detail::index_c says why in place).
  static constexpr auto in_indices = std::make_index_sequence<n_in>{};
  static constexpr auto out_indices = std::make_index_sequence<n_out>{};
  static constexpr auto upd_indices = std::make_index_sequence<n_upd>{};
  static constexpr auto giv_indices = std::make_index_sequence<n_giv>{};
  // Held in operand_tuples, not std::tuples: a std::tuple is a chain of
  // base classes, each named by the element types after it (the gradients'),
  // in the debug information and in the compiler's tables.
  using in_tuple = detail::operand_tuple<I...>;
  using out_tuple = detail::operand_tuple<O...>;
  using upd_tuple = detail::operand_tuple<U...>;

  template <std::size_t K>
  using out_spec = std::tuple_element_t<K, out_tuple>;
  template <std::size_t K>
  using out_expr = typename out_spec<K>::expression_type;
  template <std::size_t K>
  using out_element = value_type_t<out_expr<K>>;
  template <std::size_t K>
  using upd_element = value_type_t<decltype(std::declval<std::tuple_element_t<K, upd_tuple>>().expression)>;

  /// A borrowed elementwise output of the dtype of some input may be written
  /// into a lent argument's buffer (R47).
  template <std::size_t K>
  static constexpr bool candidate_output =
      out_spec<K>::borrow && is_elementwise_v<out_expr<K>> &&
      (std::is_same_v<typename decltype(std::declval<I>().variable)::value_type, out_element<K>> || ... || false);

  /// What a call holds for output K while it runs: a fresh value (Out(y)), a
  /// fresh fusor::array (Out(y, internal_type)); nothing for a borrowed output,
  /// whose buffer is the function's.
  template <std::size_t K>
  using result_t = std::conditional_t<
      out_spec<K>::borrow, std::monostate,
      std::conditional_t<out_spec<K>::internal, array<out_element<K>>, eval_result_t<out_expr<K>>>>;

 public:
  function(inputs_t<I...> ins, outputs_t<O...> outs = {}, updates_t<U...> upds = {}, givens_t<G...> givs = {})
      : ins_(FUSOR_MOVE(ins.items)),
        outs_(FUSOR_MOVE(outs.items)),
        upds_(FUSOR_MOVE(upds.items)),
        givs_(FUSOR_MOVE(givs.items)) {
    build_graph();
    finish_build(n_in);
    auto describe_output = [&](auto k) { std::get<k>(out_slots_).stamp->what = output_description(k); };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (describe_output(detail::index_c<K>), ...); }(out_indices);
  }

  /// A function with updates and no outputs.
  function(inputs_t<I...> ins, updates_t<U...> upds)
    requires(sizeof...(O) == 0)
      : function(FUSOR_MOVE(ins), outputs_t<>{}, FUSOR_MOVE(upds)) {}
  /// A function with outputs, replacements and no updates.
  function(inputs_t<I...> ins, outputs_t<O...> outs, givens_t<G...> givs)
    requires(sizeof...(U) == 0)
      : function(FUSOR_MOVE(ins), FUSOR_MOVE(outs), updates_t<>{}, FUSOR_MOVE(givs)) {}
  /// A function with updates, replacements and no outputs.
  function(inputs_t<I...> ins, updates_t<U...> upds, givens_t<G...> givs)
    requires(sizeof...(O) == 0)
      : function(FUSOR_MOVE(ins), outputs_t<>{}, FUSOR_MOVE(upds), FUSOR_MOVE(givs)) {}

  /// The same, with the expressions as written: fusor's stable rewrites
  /// (rewrite/stable.hpp) are not applied (to see, or time, the raw graph).
  function(no_rewrites_t, inputs_t<I...> ins, outputs_t<O...> outs = {}, updates_t<U...> upds = {},
           givens_t<G...> givs = {})
      : function(FUSOR_MOVE(ins), FUSOR_MOVE(outs), FUSOR_MOVE(upds), FUSOR_MOVE(givs)) {}
  function(no_rewrites_t, inputs_t<I...> ins, updates_t<U...> upds)
    requires(sizeof...(O) == 0)
      : function(FUSOR_MOVE(ins), outputs_t<>{}, FUSOR_MOVE(upds)) {}
  function(no_rewrites_t, inputs_t<I...> ins, outputs_t<O...> outs, givens_t<G...> givs)
    requires(sizeof...(U) == 0)
      : function(FUSOR_MOVE(ins), FUSOR_MOVE(outs), updates_t<>{}, FUSOR_MOVE(givs)) {}
  function(no_rewrites_t, inputs_t<I...> ins, updates_t<U...> upds, givens_t<G...> givs)
    requires(sizeof...(O) == 0)
      : function(FUSOR_MOVE(ins), outputs_t<>{}, FUSOR_MOVE(upds), FUSOR_MOVE(givs)) {}

  /// Calls the function; arguments match inputs(...) by position.
  template <class... A>
  decltype(auto) operator()(A&&... args) {
    static_assert(sizeof...(A) == n_in,
                  "FUSOR_WRONG_ARGUMENT_COUNT: a fusor::function takes exactly one argument per entry of its "
                  "inputs(...), in the same order");
    const call_guard guard(busy_);
    const collective_scope collectives(prog_.graph().collectives);  // a failed call tells the other processes
    bind_all(std::index_sequence_for<A...>{}, FUSOR_FORWARD(args)...);
    auto& entry = plan_call();
    const fusor::plan& p = entry.plan;
    auto results = prepare_outputs(p, std::index_sequence_for<O...>{});
    bind_results(p, results, std::index_sequence_for<O...>{});
    prepare_spares(entry);
    run_steps(entry, stale_hook());
    commit(p);
    advance_counters(prog_.graph());
    return make_outputs(p, results, std::index_sequence_for<O...>{});
  }

  /// Bytes held by the function.
  memory_report memory() const {
    memory_report r;
    r.space = facts_.space;
    r.arena_bytes = prog_.arena_bytes();
    if (const auto* e = prog_.current()) r.temporary_bytes = e->plan.arena_bytes;
    r.arena_allocations = prog_.arena_allocations();
    fusor::detail::apply([&](const auto&... s) { ((r.output_bytes += s.buffer.storage().bytes()), ...); }, out_slots_);
    fusor::detail::apply([&](const auto&... s) { ((r.host_bytes += s.mirror.storage().bytes()), ...); }, out_slots_);
    fusor::detail::apply([&](const auto&... s) { ((r.output_bytes += s.spare.storage().bytes()), ...); }, upd_slots_);
    return r;
  }

  /// The same function over other shared variables (Theano's
  /// Function.copy(swap=...)): `f.copy(fusor::swap(w1, w2))` reads — and
  /// updates — `w2` wherever `f` reads or updates `w1` (variables of the same
  /// C++ type); e.g. one predict() for several models. Every swapped variable
  /// must be one the function uses. The copy plans on its first call.
  template <class... T>
  [[nodiscard]] function copy(const swap_spec<T>&... swaps) const {
    const auto sw = std::make_tuple(swaps...);
    check_swaps(sw);
    return function(inputs_t<I...>{ins_}, swap_outputs(sw, std::index_sequence_for<O...>{}),
                    swap_updates(sw, std::index_sequence_for<U...>{}), swap_givens(sw, std::index_sequence_for<G...>{}));
  }

 private:
  // ------------------------------------------------------------ build-time checks

  /// A given replaces what the function would otherwise read; an explicit
  /// input is bound by the caller, so replacing one is an error (R40).
  void check_givens() const {
    auto check_given = [&](auto k) {
      const auto& t = detail::get<k>(givs_).target;
      if constexpr (!requires { t.record(); }) {
        auto check_input = [&](auto j) {
          if (detail::get<j>(ins_).variable.id() == t.id())
            throw value_error("fusor::function: input '" + t.str() + "' is replaced through givens(...), but it is "
                              "also an explicit input (position " + std::to_string(j) + "); a replaced input is no "
                              "longer an input: remove it from inputs(...) (R40)");
        };
        [&]<std::size_t... J>(std::index_sequence<J...>) { (check_input(detail::index_c<J>), ...); }(in_indices);
      }
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (check_given(detail::index_c<K>), ...); }(giv_indices);
  }

  void check_updates() const {
    std::array<std::uint64_t, n_upd + 1> targets{};
    auto check_update = [&](auto k) {
      const auto& u = detail::get<k>(upds_);
      const auto& var = u.variable;
      for (std::size_t j = 0; j < k; ++j)
        if (targets[j] == var.id()) refuse_repeated_update(*var.record());
      targets[k] = var.id();
      if (u.partial) return;  // the variable keeps its shape: the planner checks the region's
      const std::vector<bool> want = var.broadcastable();
      const std::vector<bool> got = broadcastable_pattern(u.expression, want.size());
      if (want != got) refuse_update_pattern(*var.record(), text_of(u.expression), got, want);
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (check_update(detail::index_c<K>), ...); }(upd_indices);
  }

  /// An expression's text as the plan prints it, through a graph of its own
  /// (for a message: it instantiates nothing the function's graph does not,
  /// where the expression's str() would walk its whole tree).
  template <class X>
  static std::string text_of(const X& e) {
    fusor::graph g;
    detail::graph_builder_t b(g);
    return g[b.add(e)].text;
  }

  // ------------------------------------------------------------ copies over other variables

  template <class Swaps, std::size_t... K>
  outputs_t<O...> swap_outputs(const Swaps& sw, std::index_sequence<K...>) const {
    return outputs_t<O...>{detail::operand_tuple<O...>{O(substitute(detail::get<K>(outs_).expression, sw))...}};
  }
  template <class Swaps, std::size_t... K>
  updates_t<U...> swap_updates(const Swaps& sw, std::index_sequence<K...>) const {
    return updates_t<U...>{detail::operand_tuple<U...>{U{swapped(detail::get<K>(upds_).variable, sw),
                                                substitute(detail::get<K>(upds_).expression, sw),
                                                detail::get<K>(upds_).region, detail::get<K>(upds_).partial}...}};
  }
  template <class Swaps, std::size_t... K>
  givens_t<G...> swap_givens(const Swaps& sw, std::index_sequence<K...>) const {
    [[maybe_unused]] auto target = [&](const auto& t) {
      if constexpr (requires { t.record(); }) return swapped(t, sw);
      else return t;
    };
    return givens_t<G...>{detail::operand_tuple<G...>{
        G{target(detail::get<K>(givs_).target), substitute(detail::get<K>(givs_).replacement, sw)}...}};
  }
  template <class Swaps>
  void check_swaps(const Swaps& sw) const {
    const auto& g = prog_.graph();
    fusor::detail::apply(
        [&](const auto&... s) {
          (
              [&] {
                if (g.shared_index(s.from.id()) < 0)
                  throw value_error("fusor::function::copy: " + s.from.record()->describe() +
                                    " is not used by this function, so it cannot be swapped for " +
                                    s.to.record()->describe());
              }(),
              ...);
        },
        sw);
  }

  // ------------------------------------------------------------ the graph

  template <std::size_t K>
  static constexpr bool plain_output = !candidate_output<K>;

  template <std::size_t... K>
  static auto plain_types(std::index_sequence<K...>)
      -> decltype(std::tuple_cat(
          std::declval<std::conditional_t<plain_output<K>, std::tuple<out_expr<K>>, std::tuple<>>>()...));

 public:
  /// The expressions of the outputs that are never written in place, as a
  /// std::tuple: what a multi-output kernel computes in one pass (the CUDA
  /// instantiation walks it).
  using plain_tuple = decltype(plain_types(std::index_sequence_for<O...>{}));

 private:
  /// The graph of the outputs and updates, after the checks that need only
  /// the function's parts (each refusal names what to change).
  void build_graph() {
    fusor::graph& g = prog_.graph();
    detail::graph_builder_t b(g);
    auto declare_input = [&](auto k) { b.declare_input(detail::get<k>(ins_).variable); };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (declare_input(detail::index_c<K>), ...); }(in_indices);
    check_inputs_distinct();
    check_givens();
    check_updates();
    auto add_given = [&](auto k) {
      const auto& gv = detail::get<k>(givs_);
      b.add_given(gv.target, gv.replacement);
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (add_given(detail::index_c<K>), ...); }(giv_indices);
    auto add_output = [&](auto k) {
      graph_output o;
      o.node = b.add_root(detail::get<k>(outs_).expression);
      o.borrow = out_spec<k>::borrow;
      o.internal = out_spec<k>::internal;
      o.candidate = candidate_output<k>;
      g.outputs.push_back(o);
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (add_output(detail::index_c<K>), ...); }(out_indices);
    auto add_update = [&](auto k) {
      const auto& u = detail::get<k>(upds_);
      graph_update gu;
      gu.node = b.add_root(u.expression);
      gu.variable = b.add_shared(u.variable);
      gu.broadcastable = u.variable.record()->broadcastable_mask();
      gu.partial = u.partial;
      gu.region = u.region;
      g.updates.push_back(gu);
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (add_update(detail::index_c<K>), ...); }(upd_indices);
    check_graph_reads(n_in);
    g.multi_output_kernel[static_cast<std::size_t>(backend_id::host)] =
        detail::multi_kernel_of<cpu::backend>(static_cast<plain_tuple*>(nullptr));
    g.multi_output_kernel[static_cast<std::size_t>(backend_id::device)] =
        detail::multi_kernel_of<gpu::keyed_backend>(static_cast<plain_tuple*>(nullptr));
  }

  // ------------------------------------------------------------ binding

  template <std::size_t... K, class... A>
  void bind_all(std::index_sequence<K...>, A&&... args) {
    (bind_one<K>(FUSOR_FORWARD(args)), ...);
  }

  template <std::size_t K, class A>
  void bind_one(A&& arg) {
    using Spec = std::tuple_element_t<K, in_tuple>;
    using V = std::remove_cvref_t<A>;
    static_assert(argument_value<V>,
                  "fusor::function: an argument must be a value fusor knows: xt::xarray, xt::xtensor, std::vector, an "
                  "arithmetic scalar, a type registered with fusor::shared_constructor, a shared variable's "
                  "get_value(fusor::borrow), or a strided view of memory (xt::view, xt::strided_view, xt::adapt)");
    const Spec& spec = detail::get<K>(ins_);
    // Writable only when lent with In(x, borrow) as a non-const lvalue.
    const bool lent = spec.options.borrow && std::is_lvalue_reference_v<A&&> &&
                      !std::is_const_v<std::remove_reference_t<A>>;
    using T = typename decltype(spec.variable)::value_type;
    constexpr int N = decltype(spec.variable)::rank;
    bind_argument<T, N>(facts_.inputs[K], prog_.graph().inputs[K].broadcastable, arg,
                        cast_policy{spec.options.strict, spec.options.allow_downcast}, lent,
                        [&] { return "input " + std::to_string(K) + " ('" + spec.variable.str() + "')"; });
  }

  // ------------------------------------------------------------ memory the plan writes

  template <std::size_t... K>
  auto prepare_outputs(const fusor::plan& p, std::index_sequence<K...>) {
    return std::tuple<result_t<K>...>{prepare_output<K>(p)...};
  }

  /// A buffer the function keeps across calls, made to hold `shape`: memory
  /// that still fits is kept (in `space`).
  template <class E>
  static void fit(array<E>& a, const dims& shape, const memory_space& space) {
    if (a.storage().data() && a.shape() == shape && a.space() == space) return;
    if (a.storage().how() == ownership::owned && a.storage().data() && a.space() == space &&
        a.storage().bytes() >= shape.elements() * sizeof(E))
      a = array<E>(a.storage(), shape);
    else
      a = array<E>::allocate(shape, space);
  }

  template <std::size_t K>
  result_t<K> prepare_output(const fusor::plan& p) {
    using E = out_element<K>;
    const output_plan& o = p.outputs[K];
    if (o.in_place) return result_t<K>{};  // the lent input's buffer (R47)
    const bool device = !host_accessible(facts_.space);
    if constexpr (out_spec<K>::internal && !out_spec<K>::borrow) {
      auto a = array<E>::allocate(o.shape, facts_.space);  // a fresh one, where the function runs
      prog_.slot(o.slot) = a.mutable_data();
      return a;
    } else {
      if (out_spec<K>::borrow || device) {
        // A borrowed output reuses its buffer; on a device every output is
        // computed into a buffer the function keeps there, then copied back.
        auto& slot = std::get<K>(out_slots_).buffer;
        fit(slot, o.shape, facts_.space);
        prog_.slot(o.slot) = slot.mutable_data();
      }
      if constexpr (out_spec<K>::borrow) return std::monostate{};
      else return detail::make_result<out_expr<K>>(o.shape);
    }
  }

  /// Points the plain results' slots at their data (after the tuple holding
  /// them stopped moving).
  template <class Results, std::size_t... K>
  void bind_results(const fusor::plan& p, Results& results, std::index_sequence<K...>) {
    if (!host_accessible(facts_.space)) return;  // on a device: the function's buffers, copied back after
    (
        [&] {
          if constexpr (!out_spec<K>::borrow && !out_spec<K>::internal)
            prog_.slot(p.outputs[K].slot) = detail::result_data(std::get<K>(results));
        }(),
        ...);
  }

  void prepare_spares(program::entry& e) {
    const fusor::plan& p = e.plan;
    bool replaced = false;
    auto prepare_spare = [&](auto k) {
      const update_plan& u = p.updates[k];
      if (u.in_place || u.transfer_from >= 0) return;
      using E = upd_element<k>;
      auto& spare = std::get<k>(upd_slots_).spare;
      // The buffer the variable held before the previous call, when nobody
      // else holds it and it fits (ping-pong); else a new one. (Never a
      // borrowed buffer: once the variable let go of it, it is the user's.)
      if (spare.storage().how() != ownership::borrowed && spare.storage().data() && spare.storage().use_count() == 1 &&
          spare.storage().bytes() >= u.shape.elements() * sizeof(E)) {
        spare = array<E>(spare.storage(), u.shape);
      } else {
        // A new buffer, which may sit where a freed one was (a borrowed one
        // the user has freed since): what it holds is not known.
        spare = array<E>::allocate(u.shape, detail::get<k>(upds_).variable.space());
        replaced = true;
      }
      prog_.slot(u.spare) = spare.mutable_data();
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (prepare_spare(detail::index_c<K>), ...); }(upd_indices);
    if (replaced) e.prepared->spares_replaced();
  }

  /// stale_before_write, as the program calls it before each step; none
  /// (no call per step) when no output is borrowed.
  step_hook stale_hook() noexcept {
    if constexpr ((O::borrow || ... || false))
      return {[](void* self, const step_info& s) { static_cast<function*>(self)->stale_before_write(s); }, this};
    else
      return {};
  }
  /// Before a step rewrites a borrowed output's buffer, the views of earlier
  /// calls go stale: a call that fails later never leaves them silently showing
  /// its partial results.
  void stale_before_write(const step_info& s) noexcept {
    auto stale = [&](int k) {
      auto stale_output = [&](auto o) {
        // One writer (this call; calls do not overlap): a load and a store.
        if constexpr (out_spec<o>::borrow)
          if (static_cast<int>(o) == k) {
            auto& g = std::get<o>(out_slots_).stamp->generation;
            g.store(g.load(std::memory_order_relaxed) + 1, std::memory_order_release);
          }
      };
      [&]<std::size_t... K>(std::index_sequence<K...>) { (stale_output(detail::index_c<K>), ...); }(out_indices);
    };
    if (s.kind == step_kind::output || (s.kind == step_kind::gather && s.target >= 0)) stale(s.target);
    else if (s.kind == step_kind::outputs)
      for (const auto& entry : s.group) stale(entry[2]);
  }

  // ------------------------------------------------------------ commit

  void commit(const fusor::plan& p) noexcept {
    // Snapshot the pre-call buffers that are handed over before anything is
    // installed: every update sees the state of the call's start.
    auto snapshot_spare = [&](auto k) {
      const int from = p.updates[k].transfer_from;
      if (from < 0) return;
      auto take_buffer = [&](auto j) {
        if (static_cast<int>(j) != from) return;
        if constexpr (std::is_same_v<upd_element<k>, upd_element<j>>)
          std::get<k>(upd_slots_).spare = detail::get<j>(upds_).variable.record()->storage();
      };
      [&]<std::size_t... J>(std::index_sequence<J...>) { (take_buffer(detail::index_c<J>), ...); }(upd_indices);
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (snapshot_spare(detail::index_c<K>), ...); }(upd_indices);
    auto install = [&](auto k) {
      const update_plan& u = p.updates[k];
      auto& record = *detail::get<k>(upds_).variable.record();
      if (u.in_place) {
        record.written_in_place();
        return;
      }
      auto& slot = std::get<k>(upd_slots_);
      slot.spare = record.exchange(FUSOR_MOVE(slot.spare));
      // A transferred buffer now belongs to its new variable.
      if (u.transfer_from >= 0 || u.transfer_source) slot.spare = array<upd_element<k>>();
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) { (install(detail::index_c<K>), ...); }(upd_indices);
  }

  template <class Results, std::size_t... K>
  decltype(auto) make_outputs(const fusor::plan& p, Results& results, std::index_sequence<K...>) {
    if constexpr (n_out == 0) return;
    else if constexpr (n_out == 1) return make_output<0>(p, results);
    else return std::make_tuple(make_output<K>(p, results)...);
  }

  template <std::size_t K, class Results>
  auto make_output(const fusor::plan& p, Results& results) {
    using E = out_element<K>;
    constexpr int R = rank_v<out_expr<K>>;
    [[maybe_unused]] auto& r = std::get<K>(results);
    const output_plan& o = p.outputs[K];
    auto lent = [&] {  // the output is the lent argument's buffer (R47)
      const auto& in = facts_.inputs[static_cast<std::size_t>(o.input)];
      return array<E>(buffer::borrow(const_cast<std::byte*>(in.data), in.bytes), o.shape);
    };
    auto& own = std::get<K>(out_slots_);
    if constexpr (!out_spec<K>::borrow && !out_spec<K>::internal) {
      if (!host_accessible(facts_.space))  // computed on the device: copied back into the fresh value
        if (const std::size_t bytes = o.shape.elements() * sizeof(E))
          copy_bytes(detail::result_data(r), host, own.buffer.data(), facts_.space, bytes);
      return FUSOR_MOVE(r);
    } else if constexpr (!out_spec<K>::borrow) {
      return o.in_place ? lent() : FUSOR_MOVE(r);
    } else {
      if constexpr (out_spec<K>::internal) {
        return o.in_place ? lent() : own.buffer;
      } else {
        if (o.in_place) return borrowed_output<E, R>(lent(), own.stamp);
        if (host_accessible(facts_.space)) return borrowed_output<E, R>(own.buffer, own.stamp);
        // On a device, borrow aliases nothing: a view of a host copy the
        // function reuses (and, like the buffer, rewrites at the next call).
        fit(own.mirror, o.shape, host);
        if (own.mirror.bytes()) copy_bytes(own.mirror.mutable_data(), host, own.buffer.data(), facts_.space,
                                           own.mirror.bytes());
        return borrowed_output<E, R>(own.mirror, own.stamp);
      }
    }
  }

  in_tuple ins_;
  out_tuple outs_;
  upd_tuple upds_;
  detail::operand_tuple<G...> givs_;
  std::tuple<detail::output_slot<value_type_t<typename O::expression_type>>...> out_slots_;
  std::tuple<detail::update_slot<value_type_t<decltype(std::declval<U>().expression)>>...> upd_slots_;
};

// Deduction: a function holds its expressions after fusor's stable rewrites
// (rewrite/stable.hpp), its reductions of operands its products compute into
// memory reading them from there (rewrite/kept_operands.hpp); with
// fusor::no_rewrites first, as written.
template <class... I, class... O, class... U>
function(inputs_t<I...>, outputs_t<O...>, updates_t<U...>)
    -> function<inputs_t<I...>, outputs_t<detail::function_spec_t<detail::function_set_t<O..., U...>, O>...>,
                updates_t<detail::function_spec_t<detail::function_set_t<O..., U...>, U>...>>;
template <class... I, class... O>
function(inputs_t<I...>, outputs_t<O...>)
    -> function<inputs_t<I...>, outputs_t<detail::function_spec_t<detail::function_set_t<O...>, O>...>, updates_t<>>;
template <class... I, class... U>
function(inputs_t<I...>, updates_t<U...>)
    -> function<inputs_t<I...>, outputs_t<>, updates_t<detail::function_spec_t<detail::function_set_t<U...>, U>...>>;
template <class... I, class... O, class... U, class... G>
function(inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<detail::function_spec_t<detail::function_set_t<O..., U...>, O>...>,
                updates_t<detail::function_spec_t<detail::function_set_t<O..., U...>, U>...>,
                givens_t<detail::stable_spec_t<G>...>>;
template <class... I, class... O, class... G>
function(inputs_t<I...>, outputs_t<O...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<detail::function_spec_t<detail::function_set_t<O...>, O>...>, updates_t<>,
                givens_t<detail::stable_spec_t<G>...>>;
template <class... I, class... U, class... G>
function(inputs_t<I...>, updates_t<U...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<>, updates_t<detail::function_spec_t<detail::function_set_t<U...>, U>...>,
                givens_t<detail::stable_spec_t<G>...>>;

template <class... I, class... O, class... U>
function(no_rewrites_t, inputs_t<I...>, outputs_t<O...>, updates_t<U...>)
    -> function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>>;
template <class... I, class... O>
function(no_rewrites_t, inputs_t<I...>, outputs_t<O...>) -> function<inputs_t<I...>, outputs_t<O...>, updates_t<>>;
template <class... I, class... U>
function(no_rewrites_t, inputs_t<I...>, updates_t<U...>) -> function<inputs_t<I...>, outputs_t<>, updates_t<U...>>;
template <class... I, class... O, class... U, class... G>
function(no_rewrites_t, inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>, givens_t<G...>>;
template <class... I, class... O, class... G>
function(no_rewrites_t, inputs_t<I...>, outputs_t<O...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<O...>, updates_t<>, givens_t<G...>>;
template <class... I, class... U, class... G>
function(no_rewrites_t, inputs_t<I...>, updates_t<U...>, givens_t<G...>)
    -> function<inputs_t<I...>, outputs_t<>, updates_t<U...>, givens_t<G...>>;

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/impl/function.ipp"
#endif
