// fusor/backend/gpu/backend.hpp — the device backend as the planner sees it:
// the same four names as the host's (`kernel`, `convert_kernel`,
// `multi_kernel`, `state`), so that a device runs the plans the host runs.
// Portable: g++ compiles it. Its kernels are found in the registry
// (registry.hpp): units that ask for a device compile and register them
// (instantiate.hpp; in units nvcc compiles, with their CUDA launchers,
// fusor/gpu/cuda/instantiate.cuh), and the emulated device runs their host loops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fusor/backend/gpu/kernels.hpp"
#include "fusor/backend/gpu/registry.hpp"
#include "fusor/compile/program.hpp"

namespace fusor::gpu {

struct backend {
  static constexpr backend_id id = backend_id::device;

  /// The kernel node type X compiles to for role R.
  template <kernel_role R, class X>
  static const void* kernel() {
    if constexpr (!device_role_v<R>) return nullptr;
    else if constexpr (R == kernel_role::group) return &group_kernel_of<X>::entry;
    else if constexpr (R == kernel_role::reduce) return &reduce_kernel_of<X>::entry;
    else if constexpr (R == kernel_role::dot) return &dot_kernel<value_type_t<X>>::entry;
    else return &check_kernel_of<X>::entry;
  }
  template <element T>
  static const void* convert_kernel() {
    return upload_kernel_entry<T>();
  }
  template <class... Xs>
  static const void* multi_kernel() {
    return &gpu::multi_kernel<group_kernel_of<Xs>...>::entry;
  }

  /// The steps of one plan, prepared for its device.
  class state {
   public:
    void prepare(const graph& g, const plan& p) {
      ctx_ = context{};
      ctx_.space = p.space;
      ctx_.runtime = &device_runtime_for(p.space);
      ctx_.device = p.space.device;
      ctx_.emulated = ctx_.runtime->emulated();
      ctx_.stream = ctx_.runtime->stream(ctx_.device);
      steps_.clear();
      steps_.reserve(p.steps.size());
      for (const step_info& s : p.steps) steps_.push_back(prepare_one(g, p, s));
    }
    bool runs(std::size_t i) const noexcept { return steps_[i] != nullptr; }
    void run(std::size_t i, void* const* slots) { steps_[i]->run(slots, ctx_); }
    bool capturable() const {
      for (const auto& s : steps_)
        if (s && !s->capturable()) return false;
      return true;
    }
    void bind(void* const* slots) {
      for (const auto& s : steps_)
        if (s) s->bind_only(slots);
    }
    const context& where() const noexcept { return ctx_; }

   private:
    /// The prepared kernel of one step, from the registry (backend/gpu/impl/backend.ipp).
    FUSOR_RUNTIME std::unique_ptr<prepared_step> prepare_one(const graph& g, const plan& p, const step_info& s) const;

    context ctx_;
    std::vector<std::unique_ptr<prepared_step>> steps_;
  };

  /// The backend's prepared plan: the program runs its steps.
  struct prepared_plan final : fusor::prepared_plan {
    state steps;
    void run(std::size_t i, void* const* slots) override { steps.run(i, slots); }
    void synchronize() override { steps.where().runtime->synchronize(steps.where().device); }
    bool capturable() const override { return steps.capturable(); }
    void bind(void* const* slots) override { steps.bind(slots); }
  };
  static std::unique_ptr<fusor::prepared_plan> prepare_plan(const graph& g, const plan& p) {
    auto r = std::make_unique<prepared_plan>();
    r->steps.prepare(g, p);
    return r;
  }
};

}  // namespace fusor::gpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/gpu/impl/backend.ipp"
#endif
