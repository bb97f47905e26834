// fusor/backend/gpu/impl/backend.ipp — a plan's step prepared for a device:
// the kernel the registry holds for its node, or one of the data-movement steps.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <memory>
#include <string>

#include "fusor/backend/gpu/backend.hpp"
#include "fusor/backend/gpu/impl/steps.ipp"

namespace fusor::gpu {

FUSOR_RUNTIME std::unique_ptr<prepared_step> backend::state::prepare_one(const graph& g, const plan& p, const step_info& s) const {
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
    case step_kind::communicate: return communicate_step::prepare(g, p, s);
    case step_kind::install:
    case step_kind::transfer: return nullptr;
  }
  if (!k)
    throw kernel_not_instantiated_error("fusor: no device kernel was compiled into this program for step '" +
                                        s.label + "'; " + std::string(instantiate_advice));
  return k->prepare(g, p, s, ctx_);
}

#ifdef FUSOR_SEPARATE_COMPILATION
const kernel_entry* runtime_upload_kernel(dtype type) {
  return visit(type, [](auto zero) -> const kernel_entry* { return &upload_kernel<decltype(zero)>::entry; });
}
#endif

}  // namespace fusor::gpu
