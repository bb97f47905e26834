// fusor/backend/gpu/kernels.hpp — the device backend's kernels: how the steps
// of a plan run on a device.
//
// As on the host, each step is prepared once per plan: its device evaluator is
// filled from the node's C++ type and the plan's views, its iteration space
// collapsed, and its launcher chosen — the CUDA one registered for the
// evaluator's type, or the emulation's host loop. A call binds the leaves'
// device pointers from the slot table and enqueues the kernel on the device's
// stream: nothing is allocated, nothing decided, nothing waited for (except
// where the host needs an answer: an exponent check, a copy back).
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <tuple>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/backend/gpu/launch.hpp"
#include "fusor/compile/shapes.hpp"
#include "fusor/memory/array.hpp"
#include "fusor/memory/device.hpp"

namespace fusor::gpu {

/// Where a plan's steps run.
struct context {
  device_runtime* runtime = nullptr;
  int device = 0;
  void* stream = nullptr;
  bool emulated = false;
  memory_space space = host;
};

class prepared_step {
 public:
  virtual ~prepared_step() = default;
  virtual void run(void* const* slots, const context& ctx) = 0;
  /// Whether the step may be captured into a graph (it copies nothing to or
  /// from the host, and allocates nothing).
  virtual bool capturable() const { return true; }
  /// Points the step at a slot table without running it (before a graph
  /// replay: the emulation reads the evaluators when it replays).
  virtual void bind_only(void* const* slots) { (void)slots; }
};

using prepare_fn = std::unique_ptr<prepared_step> (*)(const graph&, const plan&, const step_info&, const context&);

/// What graph_node::kernels points at, for the device backend: how to prepare
/// a step, and whether its CUDA launchers are in this program.
struct kernel_entry {
  prepare_fn prepare = nullptr;
  /// Null when every CUDA launcher the node needs is registered; otherwise
  /// the key of the first missing one.
  const char* (*missing)() = nullptr;
};

namespace detail {
/// What a kernel receives by value must be trivially copyable (CUDA copies
/// kernel parameters bytewise) and fit CUDA's parameter space.
template <class Ev>
constexpr bool kernel_parameter() {
  static_assert(std::is_trivially_copyable_v<Ev>,
                "fusor: a device evaluator must be trivially copyable: it is passed to a CUDA kernel by value");
  static_assert(sizeof(Ev) <= 32764,
                "FUSOR_KERNEL_PARAMETERS_TOO_LARGE: this expression's device evaluator exceeds CUDA's 32 764 bytes of "
                "kernel parameters; split it (materialise a part with a separate output or eval)");
  return true;
}

/// An emulated launch as data: the launcher and its arguments (values and
/// pointers only), trivially copyable, so that the emulation can record it
/// while a graph is captured and replay it.
template <class Launcher, class... Args>
struct emulated_call {
  Launcher fn;
  tuple<Args...> args;
  static void run(void* self) {
    auto* c = static_cast<emulated_call*>(self);
    [&]<std::size_t... K>(std::index_sequence<K...>) { c->fn(get<K>(c->args)..., nullptr); }(
        std::index_sequence_for<Args...>{});
  }
};

/// Runs a launcher: on the device's stream, or, emulated, as host code with
/// the device's memory open to it.
template <class Launcher, class... Args>
void launch(const context& ctx, Launcher real, Launcher emulated, Args... args) {
  if (!ctx.emulated) return real(args..., ctx.stream);
  emulated_call<Launcher, Args...> c{};
  c.fn = emulated;
  [&]<std::size_t... K>(std::index_sequence<K...>) { ((get<K>(c.args) = args), ...); }(
      std::index_sequence_for<Args...>{});
  static_assert(std::is_trivially_copyable_v<decltype(c)>);
  ctx.runtime->run_on_host(ctx.device, &emulated_call<Launcher, Args...>::run, &c, sizeof c);
}

template <class Tag, class Launcher>
Launcher require_launcher(const context& ctx, Launcher emulated, const std::string& what) {
  if (ctx.emulated) return emulated;
  if (Launcher real = find_launcher<Tag, Launcher>()) return real;
  throw kernel_not_instantiated_error(
      "fusor: no CUDA kernel was compiled into this program for " + what +
      ". Name the function's (or the expression's) type in a .cu file of the program, compiled by nvcc: "
      "#include <fusor/gpu/cuda/instantiate.cuh> and FUSOR_CUDA_INSTANTIATE(its type); see docs/gpu.md");
}

/// On a real device, splits a reduction with few outputs between blocks and
/// allocates the partial accumulators (when the plan is prepared: a call
/// allocates nothing).
inline void split(red_space& s, buffer& partials, const context& ctx, std::size_t accumulator_bytes) {
  if (ctx.emulated) return;
  const int processors = ctx.runtime->multiprocessors(ctx.device);
  s.chunks = s.by_columns ? column_chunks(s.nout, s.nred, processors) : reduction_chunks(s.nout, s.nred, processors);
  if (s.chunks > 1)
    partials = buffer::allocate(static_cast<std::size_t>(s.nout * s.chunks) * accumulator_bytes, ctx.space);
}
}  // namespace detail

// ---------------------------------------------------------------- group (fused elementwise)

/// A fused group computing Ev into elements of E: keyed by what it computes,
/// not by the node type it was built from.
template <class E, class Ev_>
struct group_kernel {
  using Ev = Ev_;
  using value_type = E;
  using tag = group_tag<E, Ev>;
  static_assert(detail::kernel_parameter<Ev>());

  struct step final : prepared_step {
    Ev ev{};
    ew_space space;
    int dest = -1;
    index_t dest_offset = 0;  ///< an update of a view: its first element in dest
    group_launcher launcher = nullptr;
    void bind_only(void* const* slots) override { bind(ev, slots); }
    void run(void* const* slots, const context& ctx) override {
      if (space.n == 0) return;
      bind(ev, slots);
      detail::launch<group_launcher>(ctx, launcher, &emulated_group<E, Ev>, static_cast<const void*>(&ev),
                                     static_cast<void*>(static_cast<E*>(slots[dest]) + dest_offset),
                                     static_cast<const ew_space*>(&space));
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s,
                                                const context& ctx) {
    auto st = std::make_unique<step>();
    // An update of a view writes its region of dest, through its strides.
    const bool region = s.region.slot >= 0;
    const dims& shape = region ? s.region.shape : p.shapes[static_cast<std::size_t>(s.node)];
    evaluator_builder{g, p, shape}.fill(st->ev, s.node);
    st->space = collapse_group(shape, region ? &s.region.strides : nullptr, st->ev);
    st->dest_offset = region ? s.region.offset : 0;
    st->dest = s.dest;
    st->launcher = detail::require_launcher<tag>(ctx, &emulated_group<E, Ev>, "'" + g[s.node].text + "'");
    return st;
  }
  static const char* missing() { return find_launcher<tag, group_launcher>() ? nullptr : launcher_key<tag>(); }
  static constexpr kernel_entry entry{&prepare, &missing};
};

/// The group kernel of a node of type X (a reference: of its target).
template <class X>
using group_kernel_of = group_kernel<value_type_t<X>, evaluator_t<fusor::detail::fused_root_t<X>>>;

/// Several outputs of one shape in one pass (W6 on a device): Gs are their
/// group kernels.
template <class... Gs>
struct multi_kernel {
  using Evs = tuple<typename Gs::Ev...>;
  using tag = multi_tag<Evs, typename Gs::value_type...>;
  static_assert(detail::kernel_parameter<Evs>());

  struct step final : prepared_step {
    Evs evs{};
    ew_space space;
    int dests[sizeof...(Gs)]{};
    void* out[sizeof...(Gs)]{};  ///< this call's destinations (a member: a recorded launch points at it)
    multi_launcher launcher = nullptr;
    void bind_only(void* const* slots) override {
      for (std::size_t k = 0; k < sizeof...(Gs); ++k) out[k] = slots[dests[k]];
      [&]<std::size_t... K>(std::index_sequence<K...>) { (bind(get<K>(evs), slots), ...); }(
          std::index_sequence_for<Gs...>{});
    }
    void run(void* const* slots, const context& ctx) override {
      if (space.n == 0) return;
      bind_only(slots);
      detail::launch<multi_launcher>(ctx, launcher, &emulated_multi<Evs, typename Gs::value_type...>,
                                     static_cast<const void*>(&evs), static_cast<void* const*>(out),
                                     static_cast<const ew_space*>(&space));
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s,
                                                const context& ctx) {
    auto st = std::make_unique<step>();
    const dims& shape = p.shapes[static_cast<std::size_t>(s.group[0][0])];
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (evaluator_builder{g, p, shape}.fill(get<K>(st->evs), s.group[K][0]), ...);
      ((st->dests[K] = s.group[K][1]), ...);
      st->space = collapse_group(shape, nullptr, get<K>(st->evs)...);
    }(std::index_sequence_for<Gs...>{});
    st->launcher = detail::require_launcher<tag>(ctx, &emulated_multi<Evs, typename Gs::value_type...>, "'" + s.label + "'");
    return st;
  }
  static const char* missing() { return find_launcher<tag, multi_launcher>() ? nullptr : launcher_key<tag>(); }
  static constexpr kernel_entry entry{&prepare, &missing};
};

// ---------------------------------------------------------------- reductions

/// A reduction by Op of Ev into elements of R.
template <class Op, class R, class Ev_>
struct reduce_kernel {
  using op = Op;
  using Ev = Ev_;
  static constexpr bool is_arg = std::is_same_v<Op, red::argmax> || std::is_same_v<Op, red::argmin>;
  // The accumulator's type: arg reductions compare operand values.
  using Acc = std::conditional_t<is_arg, typename Ev::value_type, R>;
  using tag = reduce_tag<Op, Acc, Ev>;
  static_assert(detail::kernel_parameter<Ev>());

  struct step final : prepared_step {
    Ev ev{};
    red_space space;
    int dest = -1;
    reduce_launcher launcher = nullptr;
    buffer partials;  ///< on a real device: the chunks' accumulators
    std::string what;
    dims in;
    std::unique_ptr<R[]> empty_values;  ///< a reduction of nothing: NaN or the identity, copied in
    bool reduces_nothing = false;       ///< the reduced axes are empty (refused whatever the output's size)
    bool capturable() const override { return !reduces_nothing && !(space.nout != 0 && space.nred == 0); }
    void bind_only(void* const* slots) override { bind(ev, slots); }
    void run(void* const* slots, const context& ctx) override {
      if constexpr (is_arg) {
        if (reduces_nothing)
          throw value_error(what + ": attempt to get " + Op::name + " of an empty sequence (shape " + in.str() + ")");
      } else if constexpr (Op::needs_elements) {
        if (reduces_nothing)
          throw value_error(what + ": zero-size reduction has no identity (shape " + in.str() + ")");
      }
      if (space.nout == 0) return;
      if constexpr (!is_arg) {  // (nested: an arg reduction's Op has no needs_elements)
        if constexpr (!Op::needs_elements) {
          if (space.nred == 0) {
            copy_bytes(slots[dest], ctx.space, empty_values.get(), host,
                       static_cast<std::size_t>(space.nout) * sizeof(R));
            return;
          }
        }
      }
      bind(ev, slots);
      detail::launch<reduce_launcher>(ctx, launcher, &emulated_reduce<Op, Acc, Ev>, static_cast<const void*>(&ev),
                                      slots[dest], static_cast<const red_space*>(&space),
                                      static_cast<void*>(partials.data()));
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s,
                                                const context& ctx) {
    auto st = std::make_unique<step>();
    const graph_node& n = g[s.node];
    st->what = n.text;
    const fusor::detail::reduce_geometry r = fusor::detail::reduction_of(n, p.shapes);
    st->in = r.in;
    std::uint32_t mask = r.mask;
    if constexpr (is_arg) {
      // One axis, or all of them (the flat position).
      if (n.naxes == 0) mask = (st->in.rank() >= 32 ? ~0u : (1u << st->in.rank()) - 1u);
    }
    evaluator_builder{g, p, st->in}.fill(st->ev, n.child[0]);
    st->space = layout_reduction(st->in, mask, st->ev, is_arg);
    st->reduces_nothing = fusor::detail::reduce_geometry{st->in, mask}.reduced_elements() == 0;
    if (st->in.rank() == 0) {  // a scalar operand: one element, nothing to reduce
      st->space.rank = 0;
      st->space.nout = 1;
      st->space.nred = 1;
    }
    st->dest = s.dest;
    if constexpr (!is_arg) {
      if (!Op::needs_elements && st->space.nred == 0) {
        constexpr bool mean = std::is_same_v<Op, red::mean> || std::is_same_v<Op, red::nanmean>;
        R fill = Op::template identity<R>();
        if constexpr (mean && std::numeric_limits<R>::has_quiet_NaN) fill = std::numeric_limits<R>::quiet_NaN();
        const auto count = static_cast<std::size_t>(st->space.nout);
        st->empty_values = std::make_unique<R[]>(count);
        for (std::size_t i = 0; i < count; ++i) st->empty_values[i] = fill;
      }
    }
    st->launcher = detail::require_launcher<tag>(ctx, &emulated_reduce<Op, Acc, Ev>, "'" + n.text + "'");
    detail::split(st->space, st->partials, ctx, sizeof(accumulator<Op, Acc, typename Ev::value_type>));
    return st;
  }
  static const char* missing() { return find_launcher<tag, reduce_launcher>() ? nullptr : launcher_key<tag>(); }
  static constexpr kernel_entry entry{&prepare, &missing};
};

/// The reduction kernel of a reduce (or sum_to) node type.
template <class X, class P = reduction_parts<X>>
using reduce_kernel_of = reduce_kernel<typename P::op, typename P::value_type, evaluator_t<typename P::operand>>;

// ---------------------------------------------------------------- dot

/// A matrix product of elements of V (the runtime's BLAS).
template <class V>
struct dot_kernel {

  struct step final : prepared_step {
    int a = -1, b = -1, dest = -1;
    std::size_t m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
    void run(void* const* slots, const context& ctx) override {
      if (m == 0 || k == 0) return;
      if (n == 0) {
        ctx.runtime->zero(ctx.device, slots[dest], m * k * sizeof(V));
        return;
      }
      ctx.runtime->matmul(ctx.device, dtype_of<V>, slots[a], slots[b], slots[dest], m, n, k, trans_a, trans_b);
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s, const context&) {
    if (s.accumulate)  // the planner accumulates into a variable on the host only
      throw error("fusor: internal error: an accumulating dot step ('" + s.label + "') in a device plan");
    auto st = std::make_unique<step>();
    const graph_node& node = g[s.node];
    const int ca = node.child[0], cb = node.child[1];
    const dims& sa = p.shapes[static_cast<std::size_t>(ca)];
    const dims& sb = p.shapes[static_cast<std::size_t>(cb)];
    st->a = s.reads[0];
    st->b = s.reads[1];
    st->dest = s.dest;
    auto transposed = [](const node_value& v, int read) { return v.slot == read && !v.contiguous(); };
    st->trans_a = transposed(p.values[static_cast<std::size_t>(ca)], st->a);
    st->trans_b = transposed(p.values[static_cast<std::size_t>(cb)], st->b);
    st->m = sa.rank() == 2 ? sa[0] : 1;
    st->n = sa[sa.rank() - 1];
    st->k = sb.rank() == 2 ? sb[1] : 1;
    return st;
  }
  static const char* missing() { return nullptr; }  // the runtime's own kernels
  static constexpr kernel_entry entry{&prepare, &missing};
};

// ---------------------------------------------------------------- exponent checks

/// An integer pow's exponent, reduced to its minimum on the device and read
/// back: a negative one is refused before any step writes (NumPy refuses it).
template <class Ev_>
struct check_kernel {
  using Ev = Ev_;
  using T = typename Ev::value_type;
  using tag = reduce_tag<red::min, T, Ev>;

  struct step final : prepared_step {
    Ev ev{};
    red_space space;
    array<T> lowest;  ///< one element of device memory
    reduce_launcher launcher = nullptr;
    buffer partials;
    std::string what;
    bool capturable() const override { return false; }  // the exponent's minimum comes back to the host
    void run(void* const* slots, const context& ctx) override {
      T value{};
      if constexpr (std::is_same_v<Ev, scalar<T>>) {
        value = ev.value;
      } else {
        if (space.nred == 0) return;
        bind(ev, slots);
        detail::launch<reduce_launcher>(ctx, launcher, &emulated_reduce<red::min, T, Ev>,
                                        static_cast<const void*>(&ev), static_cast<void*>(lowest.mutable_data()),
                                        static_cast<const red_space*>(&space), static_cast<void*>(partials.data()));
        copy_bytes(&value, host, lowest.data(), ctx.space, sizeof(T));
      }
      if (value < T(0))
        throw value_error(what + ": integers to negative integer powers are not allowed (an exponent is " +
                          std::to_string(value) + "), as in NumPy; compute in floating point instead, e.g. "
                          "pow(cast<double>(base), exponent)");
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s,
                                                const context& ctx) {
    auto st = std::make_unique<step>();
    const graph_node& n = g[s.node];
    st->what = n.text;
    const dims& in = p.shapes[static_cast<std::size_t>(n.child[1])];
    evaluator_builder{g, p, in}.fill(st->ev, n.child[1]);
    if constexpr (!std::is_same_v<Ev, scalar<T>>) {
      const std::uint32_t all = in.rank() >= 32 ? ~0u : (1u << in.rank()) - 1u;
      st->space = layout_reduction(in, all, st->ev, false);
      if (in.rank() == 0) {
        st->space.rank = 0;
        st->space.nout = 1;
        st->space.nred = 1;
      }
      st->lowest = array<T>::allocate(dims{1}, ctx.space);
      st->launcher = detail::require_launcher<tag>(ctx, &emulated_reduce<red::min, T, Ev>, "'" + n.text + "'");
      detail::split(st->space, st->partials, ctx, sizeof(accumulator<red::min, T, T>));
    }
    return st;
  }
  static const char* missing() {
    if constexpr (std::is_same_v<Ev, scalar<T>>) return nullptr;
    else return find_launcher<tag, reduce_launcher>() ? nullptr : launcher_key<tag>();
  }
  static constexpr kernel_entry entry{&prepare, &missing};
};
/// The check kernel of an integer pow node type.
template <class X>
using check_kernel_of = check_kernel<evaluator_t<pow_exponent_t<X>>>;

// ---------------------------------------------------------------- arguments

/// A host argument copied to the device, converted to T on the way when it
/// has another dtype (the casting checks were made when it was bound).
template <element T>
struct upload_kernel {
  struct step final : prepared_step {
    int from = -1, to = -1;
    std::size_t n = 0;
    dtype source{};
    std::unique_ptr<T[]> staging;  ///< the converted (or gathered) values
    node_value strided;            ///< a strided host argument: its view (slot -1: contiguous)
    bool capturable() const override { return false; }  // a copy from the host
    void run(void* const* slots, const context& ctx) override {
      if (n == 0) return;
      if (source == dtype_of<T> && strided.slot < 0) {
        copy_bytes(slots[to], ctx.space, slots[from], host, n * sizeof(T));
        return;
      }
      visit(source, [&](auto zero) {
        using S = decltype(zero);
        const S* src = static_cast<const S*>(slots[from]);
        if (strided.slot < 0)
          for (std::size_t i = 0; i < n; ++i) staging[i] = convert_element<T>(src[i]);
        else
          fusor::detail::for_each_strided(strided, [&](std::size_t i, index_t at) { staging[i] = convert_element<T>(src[at]); });
      });
      copy_bytes(slots[to], ctx.space, staging.get(), host, n * sizeof(T));
    }
  };

  static std::unique_ptr<prepared_step> prepare(const graph&, const plan& p, const step_info& s, const context&) {
    auto st = std::make_unique<step>();
    const slot_info& from = p.slots[static_cast<std::size_t>(s.reads[0])];
    st->from = s.reads[0];
    st->to = s.dest;
    st->n = from.shape.elements();
    st->source = from.type;
    st->strided = s.region;
    if (st->source != dtype_of<T> || st->strided.slot >= 0) st->staging = std::make_unique<T[]>(st->n);
    return st;
  }
  static const char* missing() { return nullptr; }
  static constexpr kernel_entry entry{&prepare, &missing};
};

}  // namespace fusor::gpu
