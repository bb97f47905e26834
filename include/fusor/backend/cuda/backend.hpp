// fusor/backend/cuda/backend.hpp — the device backend as the planner sees it:
// the same four names as the host's (`kernel`, `convert_kernel`,
// `multi_kernel`, `state`), so that a device runs the plans the host runs.
// Portable: g++ compiles it. Its kernels are found in the registry
// (registry.hpp): units that ask for a device compile and register them
// (instantiate.hpp; in units nvcc compiles, with their CUDA launchers,
// fusor/gpu/instantiate.cuh), and the emulated device runs their host loops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fusor/backend/cuda/kernels.hpp"
#include "fusor/backend/cuda/registry.hpp"
#include "fusor/compile/program.hpp"

namespace fusor::gpu {

struct backend {
  static constexpr backend_id id = backend_id::device;

  /// The kernel node type X compiles to for role R.
  template <kernel_role R, class X>
  static const void* kernel() {
    if constexpr (R == kernel_role::group) return &group_kernel<X>::entry;
    else if constexpr (R == kernel_role::reduce) return &reduce_kernel<X>::entry;
    else if constexpr (R == kernel_role::dot) return &dot_kernel<X>::entry;
    else return &check_kernel<X>::entry;
  }
  template <element T>
  static const void* convert_kernel() {
    return &upload_kernel<T>::entry;
  }
  template <class... Xs>
  static const void* multi_kernel() {
    return &gpu::multi_kernel<Xs...>::entry;
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
    std::unique_ptr<prepared_step> prepare_one(const graph& g, const plan& p, const step_info& s) const {
      const kernel_entry* k = nullptr;
      auto of = [&](kernel_role r) { return registered_kernel(g[s.node], r); };
      switch (s.kind) {
        case step_kind::check: k = of(kernel_role::check); break;
        case step_kind::convert:
        case step_kind::upload:
          k = static_cast<const kernel_entry*>(
              g.inputs[static_cast<std::size_t>(g[s.node].leaf)].convert[static_cast<std::size_t>(id)]);
          break;
        case step_kind::reduce: k = of(kernel_role::reduce); break;
        case step_kind::dot: k = of(kernel_role::dot); break;
        case step_kind::materialize:
        case step_kind::output:
        case step_kind::update: k = of(kernel_role::group); break;
        case step_kind::outputs:
          k = registered_multi_kernel(g);
          break;
        case step_kind::copy: return copy_boxes_step::prepare(g, p, s);
        case step_kind::assemble: return assemble_step::prepare(p, s);
        case step_kind::gather: return gather_step::prepare(g, p, s);
        case step_kind::scatter: return scatter_step::prepare(g, p, s);
        case step_kind::install:
        case step_kind::transfer: return nullptr;
      }
      if (!k)
        throw kernel_not_instantiated_error("fusor: no device kernel was compiled into this program for step '" +
                                            s.label + "'; " + std::string(instantiate_advice));
      return k->prepare(g, p, s, ctx_);
    }

    context ctx_;
    std::vector<std::unique_ptr<prepared_step>> steps_;
  };

  /// A program's view of a prepared plan.
  struct prepared final : prepared_plan {
    state steps;
    void run(std::size_t i, void* const* slots) override { steps.run(i, slots); }
    void synchronize() override { steps.where().runtime->synchronize(steps.where().device); }
    bool capturable() const override { return steps.capturable(); }
    void bind(void* const* slots) override { steps.bind(slots); }
  };
  static std::unique_ptr<prepared_plan> prepare_plan(const graph& g, const plan& p) {
    auto r = std::make_unique<prepared>();
    r->steps.prepare(g, p);
    return r;
  }
};

}  // namespace fusor::gpu
