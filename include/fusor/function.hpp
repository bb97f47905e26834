// fusor/function.hpp — compiled functions (Theano's theano.function):
//
//   auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)),
//                            fusor::outputs(fusor::Out(y, fusor::borrow)),
//                            fusor::updates(fusor::update(W, W - 0.1f * y)));
//   auto r = f(xv);   // one output -> its value; several -> std::tuple
//
// A call binds the arguments, evaluates every output and update from the
// values the variables had when the call began (simultaneous assignment,
// R57), and installs the updates only once everything is computed:
//   1. bind and check the arguments (rank, dtype, broadcastable axes) and mark
//      which borrowed arguments may be written (lent as non-const lvalues,
//      overlapping no other argument: PyTensor #1026);
//   2. lower the in-place candidates (every update; every borrowed output that
//      may reuse a borrowed input); then compute the outputs that are never
//      written in place into buffers no caller can see — outputs over one shape
//      in one fused pass (W6) — and release their temporaries;
//   3. accept an in-place write only when every
//      read of the target buffer is at the index written, it reads no other
//      accepted target, no accepted write reads its target, and no user view
//      holds the target; compute the others into buffers no caller can see;
//   4. run the in-place kernels, install the other updates, stamp the
//      borrowed outputs. Nothing in this step throws.
// Everything that can fail happens in 1–3, before any variable or borrowed
// argument is written: a call that throws changes nothing the caller can see.
//
// Memory: temporaries live in a slot arena reused call after call (the plain
// outputs' are released after their pass: liveness at kernel-group
// granularity); a dot or reduction needed twice is computed once; borrowed
// outputs keep their buffer; an update not written in place goes into the
// buffer its variable held before (ping-pong). With borrowed outputs, or
// none, a steady-state call allocates nothing.
//
// Thread safety: a function object must not be called from two threads at
// once (a concurrent call throws fusor::error). Distinct functions may run
// concurrently when they update no common shared variable and no thread
// changes a variable another function reads.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "fusor/compile/borrowed_output.hpp"
#include "fusor/compile/profile.hpp"
#include "fusor/compile/specs.hpp"
#include "fusor/eval.hpp"
#include "fusor/expr/visit.hpp"

namespace fusor {

/// Bytes a function holds (f.memory()).
struct memory_report {
  std::size_t arena_bytes = 0;        ///< the temporaries' slot arena, kept across calls
  std::size_t temporary_bytes = 0;    ///< of which the last call used
  std::size_t output_bytes = 0;       ///< borrowed-output buffers and spare update buffers
  std::size_t arena_allocations = 0;  ///< slot allocations since construction (a steady state adds none)
};

namespace detail {

template <std::size_t N, class F>
void for_each_index(F&& f) {
  [&]<std::size_t... K>(std::index_sequence<K...>) { (f(std::integral_constant<std::size_t, K>{}), ...); }(
      std::make_index_sequence<N>{});
}

/// One argument, bound: a view of T (converted into the arena if needed) and
/// whether the function may write it.
template <class T>
struct bound_argument {
  cpu::leaf<T> view;
  bool writable = false;
  const std::byte* lo = nullptr;
  std::size_t bytes = 0;
};

/// Finds the bound value of an input for the lowering.
template <class Ins, class Bound>
class function_context {
 public:
  function_context(cpu::workspace& ws, const Ins& ins, const Bound& bound) : ws_(ws), ins_(ins), bound_(bound) {}
  cpu::workspace& ws() noexcept { return ws_; }

  template <element T, int N>
  cpu::leaf<T> bind(const input<T, N>& in) {
    const cpu::leaf<T>* found = nullptr;
    for_each_index<std::tuple_size_v<Ins>>([&](auto k) {
      using S = std::tuple_element_t<k, Ins>;
      if constexpr (std::is_same_v<S, In<T, N>>)
        if (!found && std::get<k>(ins_).variable.same_as(in)) found = &std::get<k>(bound_).view;
    });
    if (!found)
      throw value_error("fusor::function: an expression reads input '" + in.str() +
                        "', which is not among the function's inputs(...)");
    return *found;
  }

 private:
  cpu::workspace& ws_;
  const Ins& ins_;
  const Bound& bound_;
};

template <class Ev>
bool reads_range(Ev& ev, const std::byte* lo, const std::byte* hi) {
  bool hit = false;
  ev.for_each_leaf([&](auto& l) {
    auto [a, b] = l.byte_range();
    if (a < hi && lo < b) hit = true;
  });
  return hit;
}

template <class Ev>
std::size_t bytes_read(Ev& ev) {
  std::size_t total = 0;
  ev.for_each_leaf([&](auto& l) {
    auto [a, b] = l.byte_range();
    total += static_cast<std::size_t>(b - a);
  });
  return total;
}

/// Where a plain output is computed: straight into the value returned.
template <class X>
struct plain_result {
  eval_result_t<X> value;
  using E = value_type_t<X>;
  E* data() {
    if constexpr (rank_v<X> == 0) return &value;
    else return value.data();
  }
  void prepare(const dims& shape) {
    if constexpr (rank_v<X> != 0) {
      typename eval_result_t<X>::shape_type s{};
      if constexpr (rank_v<X> == dynamic_rank) s.resize(shape.rank());
      for (std::size_t d = 0; d < shape.rank(); ++d) s[d] = shape[d];
      value.resize(s);
    }
  }
};

struct byte_range {
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
  bool overlaps(const byte_range& o) const noexcept { return lo < o.hi && o.lo < hi; }
};

}  // namespace detail

template <class Ins, class Outs, class Upds>
class function;

template <class... I, class... O, class... U>
class function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>> {
  static constexpr std::size_t n_in = sizeof...(I);
  static constexpr std::size_t n_out = sizeof...(O);
  static constexpr std::size_t n_upd = sizeof...(U);
  using in_tuple = std::tuple<I...>;
  using out_tuple = std::tuple<O...>;
  using upd_tuple = std::tuple<U...>;

  template <std::size_t K>
  using out_spec = std::tuple_element_t<K, out_tuple>;
  template <std::size_t K>
  using out_expr = typename out_spec<K>::expression_type;
  template <std::size_t K>
  using out_element = value_type_t<out_expr<K>>;
  template <std::size_t K>
  using upd_element = value_type_t<decltype(std::declval<std::tuple_element_t<K, upd_tuple>>().expression)>;

  /// A borrowed elementwise output of the dtype of some input may be written
  /// into a borrowed argument's buffer (R47).
  template <std::size_t K>
  static constexpr bool candidate_output =
      out_spec<K>::borrow && is_elementwise_v<out_expr<K>> &&
      (std::is_same_v<typename decltype(std::declval<I>().variable)::value_type, out_element<K>> || ... || false);

  template <std::size_t K>
  using result_t = std::conditional_t<!out_spec<K>::borrow && !out_spec<K>::internal, detail::plain_result<out_expr<K>>,
                                      array<out_element<K>>>;

  template <class E>
  struct output_slot {
    array<E> buffer;
    std::shared_ptr<output_stamp> stamp = std::make_shared<output_stamp>();
  };
  template <class E>
  struct update_slot {
    array<E> spare;
  };

 public:
  function(inputs_t<I...> ins, outputs_t<O...> outs = {}, updates_t<U...> upds = {})
      : ins_(std::move(ins.items)), outs_(std::move(outs.items)), upds_(std::move(upds.items)) {
    check_inputs_distinct();
    check_updates();
    detail::for_each_index<n_out>([&](auto k) {
      std::get<k>(out_slots_).stamp->what =
          "borrowed output " + std::to_string(k) + " (" + std::get<k>(outs_).expression.str() + ")";
    });
    if (const char* env = std::getenv("FUSOR_PROFILE"); env && *env && *env != '0') profiling_ = true;
  }

  /// A function with updates and no outputs.
  function(inputs_t<I...> ins, updates_t<U...> upds)
    requires(sizeof...(O) == 0)
      : function(std::move(ins), outputs_t<>{}, std::move(upds)) {}

  function(const function&) = delete;
  function& operator=(const function&) = delete;

  /// Calls the function; arguments match inputs(...) by position.
  template <class... A>
  decltype(auto) operator()(A&&... args) {
    static_assert(sizeof...(A) == n_in,
                  "FUSOR_WRONG_ARGUMENT_COUNT: a fusor::function takes exactly one argument per entry of its "
                  "inputs(...), in the same order");
    if (busy_.exchange(true, std::memory_order_acquire))
      throw error("fusor::function: called while another call of the same function object is running; one "
                  "function object must not be called from two threads at once");
    struct release {
      std::atomic<bool>& flag;
      ~release() { flag.store(false, std::memory_order_release); }
    } guard{busy_};
    ws_.reset();
    ws_.profile = profiling_ ? &profile_ : nullptr;
    auto bound = bind_all(std::index_sequence_for<A...>{}, std::forward<A>(args)...);
    detail::function_context<in_tuple, decltype(bound)> ctx(ws_, ins_, bound);
    return run(ctx, bound);
  }

  /// Bytes held by the function.
  memory_report memory() const {
    memory_report r;
    r.arena_bytes = ws_.bytes();
    r.temporary_bytes = last_temporary_bytes_;
    r.arena_allocations = ws_.allocations();
    std::apply([&](const auto&... s) { ((r.output_bytes += s.buffer.storage().bytes()), ...); }, out_slots_);
    std::apply([&](const auto&... s) { ((r.output_bytes += s.spare.storage().bytes()), ...); }, upd_slots_);
    return r;
  }

  /// Per-kernel calls, time, bytes moved and GB/s, when profiling is on
  /// (enable_profiling(), or FUSOR_PROFILE=1 in the environment).
  const profile_report& profile() const noexcept { return profile_; }
  void enable_profiling(bool on = true) noexcept { profiling_ = on; }
  bool profiling() const noexcept { return profiling_; }

  /// How the last call wrote update k / output k: in place or not.
  bool update_was_in_place(std::size_t k) const noexcept { return k < n_upd && in_place_upd_[k]; }
  bool output_was_in_place(std::size_t k) const noexcept { return k < n_out && in_place_out_[k]; }
  /// Whether the last call gave update k another updated variable's buffer.
  bool update_was_transfer(std::size_t k) const noexcept { return k < n_upd && transfer_from_[k] < n_upd; }

 private:
  // ------------------------------------------------------------ build-time checks

  void check_inputs_distinct() const {
    std::array<std::uint64_t, n_in + 1> ids{};
    std::array<std::string, n_in + 1> names{};
    detail::for_each_index<n_in>([&](auto k) {
      ids[k] = std::get<k>(ins_).variable.id();
      names[k] = std::get<k>(ins_).variable.str();
    });
    for (std::size_t a = 0; a < n_in; ++a)
      for (std::size_t b = a + 1; b < n_in; ++b)
        if (ids[a] == ids[b])
          throw value_error("fusor::function: input '" + names[a] + "' is listed twice in inputs(...), at positions " +
                            std::to_string(a) + " and " + std::to_string(b) + " (R40)");
  }

  void check_updates() const {
    std::array<std::uint64_t, n_upd + 1> targets{};
    detail::for_each_index<n_upd>([&](auto k) {
      const auto& u = std::get<k>(upds_);
      const auto& var = u.variable;
      for (std::size_t j = 0; j < k; ++j)
        if (targets[j] == var.id())
          throw value_error("fusor::function: " + var.record()->describe() + " has two update expressions (R54)");
      targets[k] = var.id();
      const std::vector<bool> want = var.broadcastable();
      const std::vector<bool> got = broadcastable_pattern(u.expression, want.size());
      if (want != got)
        throw value_error("fusor::function: the update of " + var.record()->describe() + ", " + u.expression.str() +
                          ", has broadcastable pattern " + pattern_str(got) + " but the variable's is " +
                          pattern_str(want) +
                          ": an update must keep the variable's type (R55). Give the variable the same pattern, or "
                          "make the expression vary along those axes (a dtype difference is fixed with "
                          "fusor::cast<E>(...))");
    });
  }

  static std::string pattern_str(const std::vector<bool>& p) {
    std::string s = "(";
    for (std::size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + std::string(p[i] ? "True" : "False");
    return s + (p.size() == 1 ? ",)" : ")");
  }

  // ------------------------------------------------------------ binding

  template <std::size_t... K, class... A>
  auto bind_all(std::index_sequence<K...>, A&&... args) {
    auto bound = std::make_tuple(bind_one<K>(std::forward<A>(args))...);
    // Writable arguments that share bytes with another argument are not
    // written, whatever the types (PyTensor #1026).
    std::array<detail::byte_range, n_in + 1> ranges{};
    detail::for_each_index<n_in>([&](auto k) {
      ranges[k] = {std::get<k>(bound).lo, std::get<k>(bound).lo + std::get<k>(bound).bytes};
    });
    detail::for_each_index<n_in>([&](auto k) {
      auto& b = std::get<k>(bound);
      if (!b.writable) return;
      for (std::size_t j = 0; j < n_in; ++j)
        if (j != k && ranges[j].overlaps(ranges[k])) b.writable = false;
    });
    return bound;
  }

  template <std::size_t K, class A>
  auto bind_one(A&& arg) {
    using Spec = std::tuple_element_t<K, in_tuple>;
    using V = std::remove_cvref_t<A>;
    static_assert(tensor_shareable<V>,
                  "fusor::function: an argument must be a value fusor knows: xt::xarray, xt::xtensor, std::vector, an "
                  "arithmetic scalar, or a type registered with fusor::shared_constructor");
    using T = typename decltype(std::declval<Spec>().variable)::value_type;
    constexpr int N = decltype(std::declval<Spec>().variable)::rank;
    static_assert(rank_of<V> == dynamic_rank || rank_of<V> == N,
                  "FUSOR_RANK_MISMATCH: an argument's static rank differs from its input's rank");
    using C = shared_constructor<V>;
    using S = typename C::element_type;
    const Spec& spec = std::get<K>(ins_);
    const dims shape = C::shape(arg);
    const S* src = C::data(arg);
    detail::bound_argument<T> b;
    b.lo = reinterpret_cast<const std::byte*>(src);
    b.bytes = shape.elements() * sizeof(S);
    // The same checks and conversion as fusor::eval's bindings (R28–R31).
    b.view = detail::bind_value(spec.variable, dtype_of<S>, shape, src, ws_,
                                [&] { return "input " + std::to_string(K) + " ('" + spec.variable.str() + "')"; },
                                cast_policy{spec.options.strict, spec.options.allow_downcast}, std::is_arithmetic_v<V>);
    // Writable only when lent with In(x, borrow) as a non-const lvalue, and
    // never a converted copy (writing it would help nobody).
    if constexpr (std::is_same_v<S, T>)
      b.writable = spec.options.borrow && std::is_lvalue_reference_v<A&&> &&
                   !std::is_const_v<std::remove_reference_t<A>> && rank_of<V> != 0;
    return b;
  }

  // ------------------------------------------------------------ the call

  template <class Ctx, class Bound>
  decltype(auto) run(Ctx& ctx, Bound& bound) {
    auto results = make_results(std::index_sequence_for<O...>{});
    in_place_out_.fill(false);
    in_place_upd_.fill(false);

    // The in-place candidates are lowered first: their temporaries (a dot, a
    // reduction) stay alive until step 4, and an output that needs the same
    // sub-expression finds it computed (workspace::recall).
    auto upd_evs = lower_updates(ctx, std::index_sequence_for<U...>{});
    auto cand_evs = lower_candidates(ctx, std::index_sequence_for<O...>{});

    // Step 2: outputs never written in place; their own temporaries are
    // released after their pass.
    const std::size_t mark = ws_.mark();
    compute_plain_outputs(ctx, results);
    ws_.release(mark);

    // Step 3: in-place decisions, then the candidates that were refused.
    decide_in_place(bound, upd_evs, cand_evs);
    compute_demoted(results, upd_evs, cand_evs);
    last_temporary_bytes_ = ws_.bytes_in_use();

    // Step 4: nothing below throws.
    run_in_place(upd_evs, cand_evs);
    install_updates();
    detail::for_each_index<n_out>([&](auto k) {
      if constexpr (out_spec<k>::borrow)
        std::get<k>(out_slots_).stamp->generation.fetch_add(1, std::memory_order_acq_rel);
    });
    return make_outputs(results, std::index_sequence_for<O...>{});
  }

  template <std::size_t... K>
  auto make_results(std::index_sequence<K...>) {
    return std::tuple<result_t<K>...>{};
  }

  template <std::size_t K>
  static constexpr bool plain_output = !candidate_output<K>;

  /// Destination pointer of output K after `prepare_output(K, shape)`.
  template <std::size_t K, class Results>
  auto* output_data(Results& results) {
    auto& r = std::get<K>(results);
    if constexpr (requires { r.mutable_data(); }) return r.mutable_data();
    else return r.data();
  }

  template <std::size_t K, class Results>
  void prepare_output(Results& results, const dims& shape) {
    constexpr int R = rank_v<out_expr<K>>;
    if constexpr (R != dynamic_rank) {
      if (shape.rank() != static_cast<std::size_t>(R))
        throw rank_error("fusor::function: output " + std::to_string(K) + " (" + std::get<K>(outs_).expression.str() +
                         ") has shape " + shape.str() + ", expected rank " + std::to_string(R));
    }
    using E = out_element<K>;
    auto& r = std::get<K>(results);
    if constexpr (out_spec<K>::borrow) {
      // The views handed out by earlier calls are stale from here on, before
      // the first byte is rewritten: should this call fail later, they must
      // not silently show its partial results.
      std::get<K>(out_slots_).stamp->generation.fetch_add(1, std::memory_order_acq_rel);
      // A borrowed output reuses its buffer; memory that still fits is kept.
      auto& slot = std::get<K>(out_slots_).buffer;
      if (!slot.storage().data() || !(slot.shape() == shape)) {
        if (slot.storage().how() == ownership::owned && slot.storage().data() &&
            slot.storage().bytes() >= shape.elements() * sizeof(E))
          slot = array<E>(slot.storage(), shape);
        else
          slot = array<E>::allocate(shape);
      }
      r = slot;
    } else if constexpr (out_spec<K>::internal) {
      r = array<E>::allocate(shape);
    } else {
      r.prepare(shape);
    }
  }

  template <class Ctx, class Results>
  void compute_plain_outputs(Ctx& ctx, Results& results) {
    auto evs = lower_plain(ctx, std::index_sequence_for<O...>{});
    std::array<dims, n_out + 1> shapes{};
    bool any = false, one_shape = true;
    std::size_t first = n_out;
    detail::for_each_index<n_out>([&](auto k) {
      if constexpr (plain_output<k>) {
        auto& ev = std::get<k>(evs);
        shapes[k] = ev.shape();
        prepare_output<k>(results, shapes[k]);
        ev.broadcast_to(shapes[k]);
        if (!any) first = k;
        else if (!(shapes[k] == shapes[first])) one_shape = false;
        any = true;
      }
    });
    if (!any) return;
    const auto t0 = clock::now();
    if (one_shape) {
      // One pass over the shared iteration space for every output (W6).
      auto triples = plain_triples(results, evs, std::index_sequence_for<O...>{});
      std::apply([&](auto&... t) { cpu::run_elementwise_multi(shapes[first], t...); }, triples);
      if (profiling_) {
        // STREAM counting: an operand read by several outputs counts once.
        std::vector<detail::byte_range> seen;
        std::size_t moved = 0;
        std::string name = "fused outputs";
        detail::for_each_index<n_out>([&](auto k) {
          if constexpr (plain_output<k>) {
            std::get<k>(evs).for_each_leaf([&](auto& l) {
              auto [a, b] = l.byte_range();
              for (const auto& r : seen)
                if (r.lo == a && r.hi == b) return;
              seen.push_back({a, b});
              moved += static_cast<std::size_t>(b - a);
            });
            moved += shapes[k].elements() * sizeof(out_element<k>);
            name += " " + std::to_string(k);
          }
        });
        profile_.record(name, seconds_since(t0), static_cast<double>(moved));
      }
    } else {
      detail::for_each_index<n_out>([&](auto k) {
        if constexpr (plain_output<k>) {
          const auto t1 = clock::now();
          cpu::run_elementwise(output_data<k>(results), shapes[k], std::get<k>(evs));
          if (profiling_)
            profile_.record("output " + std::to_string(k), seconds_since(t1),
                            static_cast<double>(detail::bytes_read(std::get<k>(evs)) +
                                                shapes[k].elements() * sizeof(out_element<k>)));
        }
      });
    }
  }

  /// (destination, evaluator, active) for each plain output.
  template <class Results, class Evs, std::size_t... K>
  auto plain_triples(Results& results, Evs& evs, std::index_sequence<K...>) {
    return std::tuple_cat(plain_triple<K>(results, evs)...);
  }
  template <std::size_t K, class Results, class Evs>
  auto plain_triple(Results& results, Evs& evs) {
    if constexpr (plain_output<K>) return std::make_tuple(std::make_tuple(output_data<K>(results), &std::get<K>(evs), true));
    else return std::tuple<>();
  }

  /// Output K lowered when `Take`, else a placeholder: one tuple slot per output.
  template <bool Take, std::size_t K, class Ctx>
  auto lower_output_if(Ctx& ctx) {
    if constexpr (Take) return cpu::lower(std::get<K>(outs_).expression, ctx);
    else return std::monostate{};
  }
  template <class Ctx, std::size_t... K>
  auto lower_plain(Ctx& ctx, std::index_sequence<K...>) {
    return std::make_tuple(lower_output_if<plain_output<K>, K>(ctx)...);
  }

  template <class Ctx, std::size_t... K>
  auto lower_updates(Ctx& ctx, std::index_sequence<K...>) {
    return std::make_tuple(cpu::lower(std::get<K>(upds_).expression, ctx)...);
  }
  template <class Ctx, std::size_t... K>
  auto lower_candidates(Ctx& ctx, std::index_sequence<K...>) {
    return std::make_tuple(lower_output_if<candidate_output<K>, K>(ctx)...);
  }

  // ------------------------------------------------------------ in place

  static constexpr std::size_t max_reads = 64;

  template <class Bound, class UpdEvs, class CandEvs>
  void decide_in_place(Bound& bound, UpdEvs& upd_evs, CandEvs& cand_evs) {
    std::array<detail::byte_range, n_upd + n_out + 1> targets{};
    std::size_t n_targets = 0;
    std::array<detail::byte_range, max_reads> reads{};
    std::size_t n_reads = 0;
    bool reads_overflow = false;

    auto acceptable = [&](auto& ev, detail::byte_range target) {
      for (std::size_t j = 0; j < n_targets; ++j)
        if (targets[j].overlaps(target) || detail::reads_range(ev, targets[j].lo, targets[j].hi)) return false;
      for (std::size_t j = 0; j < n_reads; ++j)
        if (reads[j].overlaps(target)) return false;
      return !reads_overflow;
    };
    auto accept = [&](auto& ev, detail::byte_range target) {
      targets[n_targets++] = target;
      ev.for_each_leaf([&](auto& l) {
        auto [a, b] = l.byte_range();
        if (n_reads < max_reads) reads[n_reads++] = {a, b};
        else reads_overflow = true;
      });
    };

    // Buffer transfers first: {A: B} where B is updated too hands B's old
    // buffer to A, no copy (R61: a swap {A: B, B: A} moves no data). B's own
    // update then must not write B's old buffer in place.
    decide_transfers();

    detail::for_each_index<n_upd>([&](auto k) {
      auto& u = std::get<k>(upds_);
      auto& ev = std::get<k>(upd_evs);
      auto& record = *u.variable.record();
      const dims shape = ev.shape();
      check_update_shape(u, shape);
      ev.broadcast_to(shape);
      if (transfer_from_[k] < n_upd || transfer_source_[k] || !record.has_value()) return;
      const auto& storage = record.storage();
      // A view the user holds keeps its values: then not in place.
      const bool unviewed = storage.storage().how() == ownership::borrowed || storage.storage().use_count() <= 1;
      if (!(storage.shape() == shape) || !host_accessible(storage.space()) || !unviewed) return;
      if (!detail::safe_in_place(ev, storage.data(), shape)) return;
      const auto* lo = reinterpret_cast<const std::byte*>(storage.data());
      const detail::byte_range target{lo, lo + storage.bytes()};
      if (!acceptable(ev, target)) return;
      accept(ev, target);
      in_place_upd_[k] = true;
    });

    detail::for_each_index<n_out>([&](auto k) {
      if constexpr (candidate_output<k>) {
        auto& ev = std::get<k>(cand_evs);
        using E = out_element<k>;
        const dims shape = ev.shape();
        ev.broadcast_to(shape);
        detail::for_each_index<n_in>([&](auto a) {
          auto& b = std::get<a>(bound);
          if constexpr (std::is_same_v<std::remove_cvref_t<decltype(b)>, detail::bound_argument<E>>) {
            if (in_place_out_[k] || !b.writable || !(b.view.view_shape == shape)) return;
            const detail::byte_range target{b.lo, b.lo + b.bytes};
            if (!detail::reads_range(ev, target.lo, target.hi)) return;  // reuse only what it reads
            if (!detail::safe_in_place(ev, b.view.data, shape)) return;
            if (!acceptable(ev, target)) return;
            accept(ev, target);
            in_place_out_[k] = true;
            in_place_out_target_[k] = const_cast<void*>(static_cast<const void*>(b.view.data));
          }
        });
      }
    });
  }

  /// transfer_from_[k] = j when update k is the plain value of the variable
  /// that update j updates: k takes that variable's pre-call buffer.
  void decide_transfers() {
    transfer_from_.fill(n_upd);
    transfer_source_.fill(false);
    std::array<std::uint64_t, n_upd + 1> targets{};
    detail::for_each_index<n_upd>([&](auto k) { targets[k] = std::get<k>(upds_).variable.id(); });
    detail::for_each_index<n_upd>([&](auto k) {
      const auto& u = std::get<k>(upds_);
      using X = std::remove_cvref_t<decltype(u.expression)>;
      if constexpr (requires { u.expression.variable(); }) {
        using Source = typename std::remove_cvref_t<decltype(u.expression.variable())>::value_type;
        if constexpr (std::is_same_v<element_type_of<Source>, upd_element<k>>) {
          const std::uint64_t id = u.expression.variable().id();
          for (std::size_t j = 0; j < n_upd; ++j)
            if (j != k && targets[j] == id && !transfer_source_[j] && u.expression.variable().has_value() &&
                host_accessible(u.expression.variable().space())) {
              transfer_from_[k] = j;
              transfer_source_[j] = true;
              break;
            }
        }
      }
      (void)sizeof(X);
    });
  }

  template <class Upd>
  void check_update_shape(const Upd& u, const dims& shape) const {
    const auto& record = *u.variable.record();
    if (shape.rank() != record.rank())
      throw rank_error("fusor::function: the update of " + record.describe() + ", " + u.expression.str() +
                       ", has shape " + shape.str() + " but the variable has rank " + std::to_string(record.rank()));
    for (std::size_t d = 0; d < shape.rank(); ++d)
      if (record.broadcastable(d) && shape[d] != 1)
        throw shape_error("fusor::function: the update of " + record.describe() + " has shape " + shape.str() +
                          ", but axis " + std::to_string(d) + " of the variable is broadcastable");
  }

  /// Updates and candidate outputs not written in place: into buffers the
  /// caller cannot see (spare update buffers, output buffers).
  template <class Results, class UpdEvs, class CandEvs>
  void compute_demoted(Results& results, UpdEvs& upd_evs, CandEvs& cand_evs) {
    detail::for_each_index<n_upd>([&](auto k) {
      if (in_place_upd_[k] || transfer_from_[k] < n_upd) return;
      auto& ev = std::get<k>(upd_evs);
      using E = upd_element<k>;
      const dims shape = ev.shape();
      auto& spare = std::get<k>(upd_slots_).spare;
      // The buffer the variable held before the previous call, when nobody
      // else holds it and it fits (ping-pong); else a new one.
      // (Never a borrowed buffer: once the variable let go of it, it is the
      // user's again.)
      if (spare.storage().how() != ownership::borrowed && spare.storage().data() && spare.storage().use_count() == 1 &&
          spare.storage().bytes() >= shape.elements() * sizeof(E))
        spare = array<E>(spare.storage(), shape);
      else
        spare = array<E>::allocate(shape, std::get<k>(upds_).variable.space());
      const auto t0 = clock::now();
      cpu::run_elementwise(spare.mutable_data(), shape, ev);
      if (profiling_)
        profile_.record("update " + std::get<k>(upds_).variable.record()->describe(), seconds_since(t0),
                        static_cast<double>(detail::bytes_read(ev) + spare.bytes()));
    });
    detail::for_each_index<n_out>([&](auto k) {
      if constexpr (candidate_output<k>) {
        if (in_place_out_[k]) return;
        auto& ev = std::get<k>(cand_evs);
        const dims shape = ev.shape();
        prepare_output<k>(results, shape);
        const auto t0 = clock::now();
        cpu::run_elementwise(output_data<k>(results), shape, ev);
        if (profiling_)
          profile_.record("output " + std::to_string(k), seconds_since(t0),
                          static_cast<double>(detail::bytes_read(ev) + shape.elements() * sizeof(out_element<k>)));
      }
    });
  }

  template <class UpdEvs, class CandEvs>
  void run_in_place(UpdEvs& upd_evs, CandEvs& cand_evs) noexcept {
    detail::for_each_index<n_upd>([&](auto k) {
      if (!in_place_upd_[k]) return;
      auto& record = *std::get<k>(upds_).variable.record();
      auto& ev = std::get<k>(upd_evs);
      const auto t0 = clock::now();
      cpu::run_elementwise(record.storage().mutable_data(), record.storage().shape(), ev);
      record.written_in_place();
      if (profiling_) record_noexcept("update " + record.describe() + " (in place)", seconds_since(t0),
                                      static_cast<double>(detail::bytes_read(ev) + record.storage().bytes()));
    });
    detail::for_each_index<n_out>([&](auto k) {
      if constexpr (candidate_output<k>) {
        if (!in_place_out_[k]) return;
        auto& ev = std::get<k>(cand_evs);
        using E = out_element<k>;
        in_place_out_shape_[k] = ev.shape();
        const auto t0 = clock::now();
        cpu::run_elementwise(static_cast<E*>(in_place_out_target_[k]), ev.shape(), ev);
        if (profiling_) record_noexcept("output " + std::to_string(k) + " (in place)", seconds_since(t0),
                                        static_cast<double>(detail::bytes_read(ev) + ev.shape().elements() * sizeof(E)));
      }
    });
  }

  void install_updates() noexcept {
    // Snapshot the pre-call buffers that are handed over before anything is
    // installed: every update sees the state of the call's start.
    detail::for_each_index<n_upd>([&](auto k) {
      if (transfer_from_[k] >= n_upd) return;
      detail::for_each_index<n_upd>([&](auto j) {
        if (j != transfer_from_[k]) return;
        if constexpr (std::is_same_v<upd_element<k>, upd_element<j>>)
          std::get<k>(upd_slots_).spare = std::get<j>(upds_).variable.record()->storage();
      });
    });
    detail::for_each_index<n_upd>([&](auto k) {
      if (in_place_upd_[k]) return;
      auto& record = *std::get<k>(upds_).variable.record();
      auto& slot = std::get<k>(upd_slots_);
      slot.spare = record.exchange(std::move(slot.spare));
      // A transferred buffer now belongs to its new variable; the old one is
      // held by nobody but this slot only if the source took a new buffer.
      if (transfer_from_[k] < n_upd || transfer_source_[k]) slot.spare = array<upd_element<k>>();
    });
  }

  template <class Results, std::size_t... K>
  decltype(auto) make_outputs(Results& results, std::index_sequence<K...>) {
    if constexpr (n_out == 0) return;
    else if constexpr (n_out == 1) return make_output<0>(results);
    else return std::make_tuple(make_output<K>(results)...);
  }

  template <std::size_t K, class Results>
  auto make_output(Results& results) {
    using E = out_element<K>;
    constexpr int R = rank_v<out_expr<K>>;
    auto& r = std::get<K>(results);
    if constexpr (!out_spec<K>::borrow && !out_spec<K>::internal) {
      return std::move(r.value);
    } else {
      array<E> storage = r;
      if constexpr (candidate_output<K>) {
        if (in_place_out_[K])  // the output is the borrowed argument's buffer (R47)
          storage = array<E>(buffer::borrow(in_place_out_target_[K], in_place_out_shape_[K].elements() * sizeof(E)),
                             in_place_out_shape_[K]);
      }
      if constexpr (out_spec<K>::internal) return storage;
      else return borrowed_output<E, R>(storage, std::get<K>(out_slots_).stamp);
    }
  }

  // ------------------------------------------------------------ profiling

  using clock = std::chrono::steady_clock;
  static double seconds_since(clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  }
  void record_noexcept(const std::string& name, double seconds, double bytes) noexcept {
    try {
      profile_.record(name, seconds, bytes);
    } catch (...) {  // profiling must never make a call fail after its writes
    }
  }

  in_tuple ins_;
  out_tuple outs_;
  upd_tuple upds_;
  cpu::workspace ws_;
  std::tuple<output_slot<value_type_t<typename O::expression_type>>...> out_slots_;
  std::tuple<update_slot<value_type_t<decltype(std::declval<U>().expression)>>...> upd_slots_;
  std::array<bool, n_out + 1> in_place_out_{};
  std::array<bool, n_upd + 1> in_place_upd_{};
  std::array<std::size_t, n_upd + 1> transfer_from_{};
  std::array<bool, n_upd + 1> transfer_source_{};
  std::array<void*, n_out + 1> in_place_out_target_{};
  std::array<dims, n_out + 1> in_place_out_shape_{};
  std::size_t last_temporary_bytes_ = 0;
  bool profiling_ = false;
  profile_report profile_;
  std::atomic<bool> busy_{false};
};

template <class... I, class... O, class... U>
function(inputs_t<I...>, outputs_t<O...>, updates_t<U...>) -> function<inputs_t<I...>, outputs_t<O...>, updates_t<U...>>;
template <class... I, class... O>
function(inputs_t<I...>, outputs_t<O...>) -> function<inputs_t<I...>, outputs_t<O...>, updates_t<>>;
template <class... I, class... U>
function(inputs_t<I...>, updates_t<U...>) -> function<inputs_t<I...>, outputs_t<>, updates_t<U...>>;

}  // namespace fusor
