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

struct backend {
  static constexpr backend_id id = backend_id::host;

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
    return &cpu::convert_kernel<T>::entry;
  }
  template <class... Xs>
  static const void* multi_kernel() {
    return &cpu::multi_kernel<Xs...>::entry;
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

   private:
    static std::unique_ptr<prepared_step> prepare_one(const graph& g, const plan& p, const step_info& s) {
      const kernel_entry* k = nullptr;
      auto of = [&](kernel_role r) {
        return static_cast<const kernel_entry*>(g[s.node].kernel(id, r));
      };
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
          k = static_cast<const kernel_entry*>(g.multi_output_kernel[static_cast<std::size_t>(id)]);
          break;
        case step_kind::copy: return copy_boxes_step::prepare(g, p, s);
        case step_kind::assemble: return assemble_step::prepare(p, s);
        case step_kind::gather: return gather_step::prepare(g, p, s);
        case step_kind::scatter: return scatter_step::prepare(g, p, s);
        case step_kind::install:
        case step_kind::transfer: return nullptr;
      }
      if (!k)
        throw error("fusor: internal error: no host kernel for step '" + s.label +
                    "' (the graph builder did not compile one for this node)");
      return k->prepare(g, p, s);
    }

    std::vector<std::unique_ptr<prepared_step>> steps_;
  };

  /// A program's view of a prepared plan.
  struct prepared final : prepared_plan {
    state steps;
    void run(std::size_t i, void* const* slots) override { steps.run(i, slots); }
  };
  static std::unique_ptr<prepared_plan> prepare_plan(const graph& g, const plan& p) {
    auto r = std::make_unique<prepared>();
    r->steps.prepare(g, p);
    return r;
  }
};

}  // namespace fusor::cpu
