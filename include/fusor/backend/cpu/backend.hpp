// fusor/backend/cpu/backend.hpp — the host backend as the planner sees it:
// which kernels a node type compiles to (`kernel`, `convert_kernel`,
// `multi_kernel`), and `state`, the steps of one plan prepared for the host.
// A CUDA backend provides the same four names.
#pragma once

#include <memory>
#include <vector>

#include "fusor/backend/cpu/kernels.hpp"
#include "fusor/compile/program.hpp"

namespace fusor::cpu {

/// The host kernels that depend on a dtype alone and do no arithmetic of
/// their own: an argument's conversion to T, and a matrix product of T (BLAS,
/// which picks its instruction set at run time). Under
/// FUSOR_SEPARATE_COMPILATION libfusor compiles them once, for every dtype
/// (backend.ipp), and a unit takes their entries from it instead of
/// instantiating them: a conversion kernel per dtype the argument may arrive
/// in. Header-only use instantiates the ones a unit uses, as any other
/// kernel. (A sum of a temporary, also one kernel per dtype, stays in the
/// units: it is a vector loop, compiled for the unit's instruction set.)
/// The device's upload of an argument is its twin (gpu/registry.hpp).
#ifdef FUSOR_SEPARATE_COMPILATION
const kernel_entry* runtime_convert_kernel(dtype type);
const kernel_entry* runtime_dot_kernel(dtype type);
#endif
template <element T>
const void* convert_kernel_entry() {
#ifdef FUSOR_SEPARATE_COMPILATION
  return runtime_convert_kernel(dtype_of<T>);
#else
  return &convert_kernel<T>::entry;
#endif
}
template <class V>
const void* dot_kernel_entry() {
#ifdef FUSOR_SEPARATE_COMPILATION
  return runtime_dot_kernel(dtype_of<V>);
#else
  return &dot_kernel<V>::entry;
#endif
}

struct backend {
  static constexpr backend_id id = backend_id::host;

  /// The kernel node type X compiles to for role R: keyed by what it
  /// computes (value types and evaluator), so equal groups share one.
  /// (None in nvcc's device pass, which keeps no host code: core/config.hpp.)
  template <kernel_role R, class X>
  FUSOR_FOLDED static const void* kernel() {
#if FUSOR_DEVICE_PASS
    return nullptr;
#else
    if constexpr (R == kernel_role::group) return &group_kernel_of<X>::entry;
    else if constexpr (R == kernel_role::reduce && host_sums_from_memory_v<X>) return nullptr;  // reduce_read does
    else if constexpr (R == kernel_role::reduce) return &reduce_kernel_of<X>::entry;
    else if constexpr (R == kernel_role::reduce_read) return &materialised_reduce_kernel_of<X>::entry;
    else if constexpr (R == kernel_role::dot) return dot_kernel_entry<value_type_t<X>>();
    else return &check_kernel_of<X>::entry;
#endif
  }
  template <element T>
  static const void* convert_kernel() {
    return convert_kernel_entry<T>();
  }
  template <class... Xs>
  static const void* multi_kernel() {
#if FUSOR_DEVICE_PASS
    return nullptr;  // (as kernel() above)
#else
    return &cpu::multi_kernel<group_kernel_of<Xs>...>::entry;
#endif
  }

  /// The steps of one plan, prepared for the host.
  class state {
   public:
    void prepare(const graph& g, const plan& p) {
      steps_.clear();
      steps_.reserve(p.steps.size());
      for (const step_info& s : p.steps) steps_.push_back(prepare_one(g, p, s));
    }
    /// Whether step i runs a kernel (install and transfer steps are the commit's).
    bool runs(std::size_t i) const noexcept { return steps_[i] != nullptr; }
    void run(std::size_t i, void* const* slots) { steps_[i]->run(slots); }
    void spares_replaced() noexcept {
      for (auto& s : steps_)
        if (s) s->spares_replaced();
    }

   private:
    /// The prepared kernel of one step (backend/cpu/impl/backend.ipp).
    FUSOR_RUNTIME static std::unique_ptr<prepared_step> prepare_one(const graph& g, const plan& p, const step_info& s);

    std::vector<std::unique_ptr<prepared_step>> steps_;
  };

  /// The backend's prepared plan: the program runs its steps.
  struct prepared_plan final : fusor::prepared_plan {
    state steps;
    void run(std::size_t i, void* const* slots) override { steps.run(i, slots); }
    void spares_replaced() noexcept override { steps.spares_replaced(); }
  };
  static std::unique_ptr<fusor::prepared_plan> prepare_plan(const graph& g, const plan& p) {
    auto r = std::make_unique<prepared_plan>();
    r->steps.prepare(g, p);
    return r;
  }
};

}  // namespace fusor::cpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/cpu/impl/backend.ipp"
#endif
