// fusor/backend/cpu/kernels.hpp — the CPU backend's kernels: how the steps of
// a plan run on the host.
//
// For each node type that a step may be rooted at, the backend compiles a
// kernel; when a plan is built, each step's kernel is *prepared* once: its
// evaluator tree is built from the node's C++ type and the plan's views (every
// array leaf reads a slot of the plan), broadcast to the step's shape, its
// axes merged and its vectorisation decided. A call then only binds each
// leaf's data pointer from the slot table and runs the loop: no shape work, no
// allocation, nothing decided.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/backend/cpu/blas.hpp"
#include "fusor/backend/cpu/evaluator.hpp"
#include "fusor/backend/cpu/loop.hpp"
#include "fusor/backend/cpu/reduce.hpp"
#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/shapes.hpp"
#include "fusor/core/config.hpp"
#include "fusor/expr/fusion.hpp"

namespace fusor::cpu {

/// A step prepared for one plan.
class prepared_step {
 public:
  using run_fn = void (*)(prepared_step&, void* const*);
  virtual ~prepared_step() = default;
  /// Runs the step; `slots` maps every slot of the plan to its memory.
  /// Throws only for exponent checks, which run before anything is written.
  void run(void* const* slots) { run_(*this, slots); }
  /// The spare buffers of the next run are new (fusor::prepared_plan::spares_replaced).
  virtual void spares_replaced() noexcept {}

 protected:
  /// A kernel's step (kernel_step): run by the kernel's function, one
  /// indirect call per step.
  explicit prepared_step(run_fn run) noexcept : run_(run) {}
  /// The data-movement steps (impl/steps.ipp): run by do_run.
  prepared_step() noexcept = default;
  virtual void do_run(void* const*) {}

 private:
  static void virtual_run(prepared_step& s, void* const* slots) { s.do_run(slots); }
  run_fn run_ = &virtual_run;
};

using prepare_fn = std::unique_ptr<prepared_step> (*)(const graph&, const plan&, const step_info&);

/// What graph_node::kernels points at, for the CPU backend.
struct kernel_entry {
  prepare_fn prepare = nullptr;
};

/// The step of a kernel whose evaluator and loop have types of its own (a
/// fused group, a reduction, an exponent check): those live in the step's
/// storage (`State`: views, shapes and flags, trivially destructible), run
/// by the kernel's function. Everything else — the tables of leaves, the
/// destination, the name — is this one class for every kernel, so that a
/// kernel compiles to its two functions (prepare, and run with its loops)
/// and not also to a class with its own virtual table, type information,
/// constructors and destructors (with the loops' set-up, a fifth of a test
/// unit's code at -Og, once per kernel).
class kernel_step final : public prepared_step {
 public:
  static kernel_step& of(prepared_step& s) noexcept { return static_cast<kernel_step&>(s); }

  /// A step run by `run` (which receives it: kernel_step::of), its State
  /// value-initialised right after it, in the same block: a call reads both.
  template <class State>
  static std::unique_ptr<kernel_step> make(run_fn run) {
    static_assert(std::is_trivially_destructible_v<State>, "fusor: a kernel's state must be trivially destructible");
    static_assert(alignof(State) <= alignof(std::max_align_t), "fusor: a kernel's state is over-aligned");
    void* block = ::operator new(state_offset() + sizeof(State));
    std::unique_ptr<kernel_step> st(::new (block) kernel_step(run));
    ::new (st->state_address()) State();
    return st;
  }
  /// The block make() allocated, whatever its size.
  static void operator delete(void* p) noexcept { ::operator delete(p); }

  template <class State>
  State& state() noexcept {
    return *std::launder(static_cast<State*>(state_address()));
  }

  /// Adds the leaves of `ev` (which lives in the state: the pointers stay
  /// valid) as the next table: 0 the kernel's evaluator, then a nanmean's
  /// count or a multi-output's next evaluators.
  template <class Ev>
  const leaf_table& add_leaves(Ev& ev) {
    tables.push_back(leaves_of(ev));
    return tables.back();
  }

  std::vector<leaf_table> tables;
  int dest = -1, scratch = -1, axis = -1;
  index_t dest_offset = 0;  ///< an update of a view: its first element in dest
  dims keep, in;            ///< a reduction's kept and operand shapes
  std::string what;         ///< the node's text, for errors

 private:
  explicit kernel_step(run_fn run) noexcept : prepared_step(run) {}
  static constexpr std::size_t state_offset() noexcept {
    constexpr std::size_t a = alignof(std::max_align_t);
    return (sizeof(kernel_step) + a - 1) / a * a;
  }
  void* state_address() noexcept { return reinterpret_cast<std::byte*>(this) + state_offset(); }
};

/// The set-up of a fused group's step that does not depend on its evaluator
/// (compiled once: impl/kernels.ipp): its destination, the region of it an
/// update of a view writes, whether the output is streamed, and the loop
/// over the leaves of `st`'s first table.
FUSOR_RUNTIME void prepare_group(kernel_step& st, elementwise_layout& loop, const vector_traits& traits,
                                 const plan& p, const step_info& s);
/// The same for a reduction's step: its destination, scratch, text, operand
/// shape (`in`) and kept shape (`keep`).
FUSOR_RUNTIME void describe_reduction(kernel_step& st, const graph_node& n, const plan& p, const step_info& s);

// ---------------------------------------------------------------- evaluators

/// The evaluator type of a node type: fused nodes (map, cast, constants)
/// become evaluator nodes, everything else a strided leaf reading its slot.
/// A plain type computation (no function is instantiated to deduce it).
template <class X>
struct evaluator_of {
  using type = leaf<value_type_t<X>>;  // input, shared variable, reduce, dot, transpose, reshape
};
template <element E>
struct evaluator_of<constant<E>> {
  using type = scalar_leaf<E>;
};
template <int N>
struct evaluator_of<iota_node<N>> {
  using type = index_leaf;
};
template <class F, class S, class... A>
struct evaluator_of<map_node<F, S, A...>> {
  using type = map_eval<F, typename map_node<F, S, A...>::value_type, typename map_node<F, S, A...>::casts,
                        typename evaluator_of<A>::type...>;
};
template <element T, class A>
struct evaluator_of<cast_node<T, A>> {
  using type = cast_eval<T, typename evaluator_of<A>::type>;
};
template <element T, class N, class D>
struct evaluator_of<size_ratio_node<T, N, D>> {
  using type = scalar_leaf<T>;
};
template <class C>
struct evaluator_of<gate_node<C>> {
  using type = gate_eval<typename evaluator_of<C>::type>;
};
template <element T, class L>
struct evaluator_of<zeros_of_node<T, L>> {
  using type = scalar_leaf<T>;
};
/// A reference is its target, fused; or, where the target fused would be
/// large, a leaf reading it from memory (expr/fusion.hpp).
template <class X>
struct evaluator_of<ref_node<X>> {
  using target = typename ref_node<X>::target_type;
  using type = std::conditional_t<fusor::detail::reads_kept_v<ref_node<X>>, leaf<value_type_t<target>>,
                                  typename evaluator_of<target>::type>;
};
template <class X>
using evaluator_t = typename evaluator_of<X>::type;

/// Fills the evaluator of node `node` for a plan, in place: each level writes
/// its own fields and recurses into its children's, so a deep expression is
/// never copied level by level. It walks the graph's nodes beside the
/// evaluator's structure, so it depends on the evaluator type alone, not on
/// the node types it came from (the graph already made references
/// transparent): fused groups that compute the same thing over different
/// variables share one kernel.
struct evaluator_builder {
  const graph& g;
  const plan& p;

  int child(int node, int k) const { return g[node].child[static_cast<std::size_t>(k)]; }

  /// An array read from its slot: an input, a shared variable, a
  /// materialised operand, a view.
  template <class E>
  void fill(leaf<E>& l, int node) const {
    const node_value& v = p.values[static_cast<std::size_t>(node)];
    l.slot = v.slot;
    l.byte_offset = static_cast<std::ptrdiff_t>(v.offset) * static_cast<std::ptrdiff_t>(sizeof(E));
    l.view_shape = v.shape;
    l.view_strides = v.strides;
  }
  void fill(index_leaf& l, int node) const {
    l.view_shape = p.shapes[static_cast<std::size_t>(node)];
    l.view_strides = c_strides(l.view_shape);
  }
  /// A constant, a size ratio (a mean's 1/n), or zeros.
  template <class E>
  void fill(scalar_leaf<E>& l, int node) const {
    l.value = fusor::detail::scalar_node_value<E>(g, p.shapes, node);
  }
  template <class C>
  void fill(gate_eval<C>& ev, int node) const {
    ev.open = g[node].arity == 1;
    if (ev.open) fill(ev.child, child(node, 0));
  }
  template <class F, class R, class Casts, class... C>
  void fill(map_eval<F, R, Casts, C...>& ev, int node) const {
    // One and two children spelled out, as in the evaluators' walks (evaluator.hpp).
    if constexpr (sizeof...(C) == 1) {
      fill(ev.template child<0>(), child(node, 0));
    } else if constexpr (sizeof...(C) == 2) {
      fill(ev.template child<0>(), child(node, 0));
      fill(ev.template child<1>(), child(node, 1));
    } else {
      [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        (fill(ev.template child<K>(), child(node, static_cast<int>(K))), ...);
      }(std::index_sequence_for<C...>{});
    }
  }
  template <class T, class C>
  void fill(cast_eval<T, C>& ev, int node) const {
    fill(ev.child, child(node, 0));
  }
};

// ---------------------------------------------------------------- group (fused elementwise)

/// A fused group computing Ev into elements of E, written into the step's
/// destination: an output, an update (in place or into its spare), a
/// materialised operand. Keyed by what it computes (the evaluator), not by
/// the node type it was built from.
template <class E, class Ev>
struct group_kernel {
  using value_type = E;
  using evaluator = Ev;

  struct state {
    Ev ev;
    elementwise_loop<E, Ev> loop;
  };
  static void run(prepared_step& step, void* const* slots) {
    kernel_step& st = kernel_step::of(step);
    state& k = st.state<state>();
    bind(k.ev, slots);
    k.loop.run(static_cast<E*>(slots[st.dest]) + st.dest_offset, k.ev);
  }

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = kernel_step::make<state>(&run);
    state& k = st->template state<state>();
    evaluator_builder{g, p}.fill(k.ev, s.node);
    st->add_leaves(k.ev);
    prepare_group(*st, k.loop, vector_traits_of<E, Ev>(), p, s);
    return st;
  }
  static constexpr kernel_entry entry{&prepare};
};
/// The group kernel of a node of type X (a reference: of its target).
template <class X>
using group_kernel_of = group_kernel<value_type_t<X>, evaluator_t<fusor::detail::fused_root_t<X>>>;

/// Several outputs of one shape in one pass (W6): Gs are their group kernels.
template <class... Gs>
struct multi_kernel {
  struct state {
    std::tuple<typename Gs::evaluator...> evs;
    std::array<int, sizeof...(Gs)> dests{};
    multi_loop<typename Gs::evaluator...> loop;
  };
  static void run(prepared_step& step, void* const* slots) {
    run_all(kernel_step::of(step).state<state>(), slots, std::index_sequence_for<Gs...>{});
  }
  template <std::size_t... K>
  static void run_all(state& k, void* const* slots, std::index_sequence<K...>) {
    (bind(std::get<K>(k.evs), slots), ...);
    k.loop.run(std::tuple<typename Gs::value_type*...>{static_cast<typename Gs::value_type*>(slots[k.dests[K]])...},
               std::get<K>(k.evs)...);
  }

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = kernel_step::make<state>(&run);
    state& k = st->template state<state>();
    const evaluator_builder b{g, p};
    prepare_each(*st, k, b, s, std::index_sequence_for<Gs...>{});
    const dims& shape = p.shapes[static_cast<std::size_t>(s.group[0][0])];
    k.loop.prepare(shape, st->tables.data());
    return st;
  }
  template <std::size_t... K>
  static void prepare_each(kernel_step& st, state& k, const evaluator_builder& b, const step_info& s,
                           std::index_sequence<K...>) {
    ((b.fill(std::get<K>(k.evs), s.group[K][0]), st.add_leaves(std::get<K>(k.evs)), k.dests[K] = s.group[K][1]), ...);
  }
  static constexpr kernel_entry entry{&prepare};
};

// ---------------------------------------------------------------- reductions

/// A reduction by Op of Ev into elements of R.
template <class Op, class R, class Ev>
struct reduce_kernel {
  static constexpr bool is_arg = std::is_same_v<Op, red::argmax> || std::is_same_v<Op, red::argmin>;
  static constexpr bool is_nanmean = std::is_same_v<Op, red::nanmean>;
  using loop_t = std::conditional_t<is_nanmean, nanmean_loop<R, Ev>, reduce_loop<Op, R, Ev>>;

  struct state {
    Ev ev;
    loop_t loop;
  };
  static void run(prepared_step& step, void* const* slots) {
    kernel_step& st = kernel_step::of(step);
    state& k = st.state<state>();
    bind(k.ev, slots);
    R* out = static_cast<R*>(slots[st.dest]);
    if constexpr (is_arg) {
      using V = typename Ev::value_type;
      arg_reduce_into<Op>(out, static_cast<V*>(slots[st.scratch]), st.keep, st.in, st.axis, k.ev, st.tables[0],
                          st.what);
    } else {
      if (k.loop.empty(out, st.what)) return;
      if constexpr (is_nanmean) {
        bind(k.loop.numbers, slots);
        k.loop.run(out, k.ev, static_cast<double*>(slots[st.scratch]));
      } else {
        k.loop.run(out, k.ev);
      }
    }
  }

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = kernel_step::make<state>(&run);
    state& k = st->template state<state>();
    const graph_node& n = g[s.node];
    evaluator_builder{g, p}.fill(k.ev, s.source >= 0 ? s.source : n.child[0]);
    const leaf_table& leaves = st->add_leaves(k.ev);
    describe_reduction(*st, n, p, s);
    if constexpr (is_arg) {
      st->axis = n.naxes == 0 ? -1 : fusor::detail::normalise_axis(n.axes[0], st->in.rank(), n.text);
    } else if constexpr (is_nanmean) {
      k.loop.numbers = cast_eval<double, Ev>{k.ev};  // its own leaves: the count's set-up may differ from the sum's
      const leaf_table& numbers = st->add_leaves(k.loop.numbers);
      k.loop.prepare(st->keep, st->in, st->tables[0], numbers);
    } else {
      k.loop.prepare(st->keep, st->in, leaves);
    }
    return st;
  }
  static constexpr kernel_entry entry{&prepare};
};

/// The reduction kernel of a reduce node type (or of a sum_to whose dtype the host
/// cannot sum from memory: compile/graph.hpp, host_sums_from_memory_v).
template <class X, class P = reduction_parts<X>>
using reduce_kernel_of = reduce_kernel<typename P::op, typename P::value_type, evaluator_t<typename P::operand>>;

/// The same reduction of an operand already in memory (another step's
/// temporary: compile/impl/planner.ipp, materialised_twin): one kernel per op
/// and dtype, whatever the node.
template <class X, class P = reduction_parts<X>>
using materialised_reduce_kernel_of = reduce_kernel<typename P::op, typename P::value_type, leaf<typename P::value_type>>;

// ---------------------------------------------------------------- dot

/// A matrix product of elements of V (BLAS).
template <class V>
struct dot_kernel {

  struct step final : prepared_step {
    int a = -1, b = -1, dest = -1;
    std::size_t m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
    double alpha = 1.0;
    bool accumulate = false;
    void do_run(void* const* slots) override {
      matmul(static_cast<const V*>(slots[a]), static_cast<const V*>(slots[b]), static_cast<V*>(slots[dest]), m, n,
             k, trans_a, trans_b, alpha, accumulate);
    }
  };

  /// A matrix stored as the transpose of contiguous memory goes to BLAS as is,
  /// with a flag.
  static bool transposed(const node_value& v, int read) {
    return v.slot == read && !v.contiguous();
  }

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<step>();
    const graph_node& node = g[s.node];
    const int ca = node.child[0], cb = node.child[1];
    const dims& sa = p.shapes[static_cast<std::size_t>(ca)];
    const dims& sb = p.shapes[static_cast<std::size_t>(cb)];
    st->a = s.reads[0];
    st->b = s.reads[1];
    st->dest = s.dest;
    st->trans_a = transposed(p.values[static_cast<std::size_t>(ca)], st->a);
    st->trans_b = transposed(p.values[static_cast<std::size_t>(cb)], st->b);
    st->m = sa.rank() == 2 ? sa[0] : 1;
    st->n = sa[sa.rank() - 1];
    st->k = sb.rank() == 2 ? sb[1] : 1;
    st->alpha = s.alpha;
    st->accumulate = s.accumulate;
    return st;
  }
  static constexpr kernel_entry entry{&prepare};
};

// ---------------------------------------------------------------- exponent checks

/// For an integer pow node: refuses a negative exponent (NumPy: "integers to
/// negative integer powers are not allowed"), by a min reduction fused with
/// the exponent's expression, of evaluator Ev; a constant is just read.
template <class Ev>
struct check_kernel {
  using T = typename Ev::value_type;

  struct state {
    Ev ev;
    reduce_loop<red::min, T, Ev> loop;
  };
  static void run(prepared_step& step, void* const* slots) {
    kernel_step& st = kernel_step::of(step);
    state& k = st.state<state>();
    T lowest{};
    if constexpr (is_scalar_leaf_v<Ev>) {
      lowest = k.ev.value;
    } else {
      bind(k.ev, slots);
      if (k.loop.in.elements() == 0) return;
      k.loop.run(&lowest, k.ev);
    }
    if (lowest < T(0))
      throw value_error(st.what + ": integers to negative integer powers are not allowed (an exponent is " +
                        std::to_string(lowest) + "), as in NumPy; compute in floating point instead, e.g. "
                        "pow(cast<double>(base), exponent)");
  }

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = kernel_step::make<state>(&run);
    state& k = st->template state<state>();
    const graph_node& n = g[s.node];
    st->what = n.text;
    evaluator_builder{g, p}.fill(k.ev, n.child[1]);
    const leaf_table& leaves = st->add_leaves(k.ev);
    if constexpr (!is_scalar_leaf_v<Ev>) {
      const dims& in = p.shapes[static_cast<std::size_t>(n.child[1])];
      dims one;
      for (std::size_t d = 0; d < in.rank(); ++d) one.push_back(1);
      k.loop.prepare(one, in, leaves);
    }
    return st;
  }
  static constexpr kernel_entry entry{&prepare};
};
/// The check kernel of an integer pow node type.
template <class X>
using check_kernel_of = check_kernel<evaluator_t<pow_exponent_t<X>>>;

// ---------------------------------------------------------------- argument conversion

/// An argument of another dtype, converted to T (astype's rules, after the
/// casting checks the binding made).
template <element T>
struct convert_kernel {
  template <element S>
  struct step final : prepared_step {
    int from = -1, to = -1;
    std::size_t n = 0;
    node_value source;  ///< a strided argument: its view (slot -1: contiguous)
    void do_run(void* const* slots) override {
      const S* src = static_cast<const S*>(slots[from]);
      T* dst = static_cast<T*>(slots[to]);
      if (source.slot < 0) {
        for (std::size_t i = 0; i < n; ++i) dst[i] = convert_element<T>(src[i]);
        return;
      }
      fusor::detail::for_each_strided(source, [&](std::size_t i, index_t at) { dst[i] = convert_element<T>(src[at]); });
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph&, const plan& p, const step_info& s) {
    const slot_info& from = p.slots[static_cast<std::size_t>(s.reads[0])];
    return visit(from.type, [&](auto zero) -> std::unique_ptr<prepared_step> {
      auto st = std::make_unique<step<decltype(zero)>>();
      st->from = s.reads[0];
      st->to = s.dest;
      st->n = from.shape.elements();
      st->source = s.region;
      return st;
    });
  }
  static constexpr kernel_entry entry{&prepare};
};

}  // namespace fusor::cpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/cpu/impl/kernels.ipp"
#endif
