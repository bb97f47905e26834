// fusor/impl/function.ipp — where a function runs: its memory space and its backend (function.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/function.hpp"

namespace fusor {
namespace detail {

FUSOR_RUNTIME memory_space space_of_graph(graph& g, const std::string& who) {
  const graph_shared* first = nullptr;
  for (const auto& v : g.shared)
    if (!first && !v.record->is_constant()) first = &v;
  const memory_space s = first ? first->space : host;
  for (const auto& v : g.shared)
    if (!v.record->is_constant() && v.space != s) {
      std::string list;
      for (const auto& w : g.shared)
        if (!w.record->is_constant()) list += (list.empty() ? "" : ", ") + w.describe() + " on " + w.space.str();
      throw space_error(who + ": its shared variables live in different memory spaces (" + list +
                        "); one function runs in one space: move them with set_value or create them in one space");
    }
  for (auto& v : g.shared)
    if (v.record->is_constant() && v.space != s) {
      v.record = v.record->constant_in(s);
      v.space = s;
    }
  return s;
}

FUSOR_RUNTIME void target(program& prog, const memory_space& space, const std::string& who) {
  if (host_accessible(space)) {
    prog.target(backend_id::host, space, &cpu::backend::prepare_plan);
    return;
  }
  const gpu::missing_device_kernels missing = gpu::find_missing_kernels(prog.graph());
  auto list = [](const std::vector<std::string>& texts) {
    std::string out;
    for (const auto& t : texts) out += "\n  " + t;
    return out;
  };
  // The first line says what to write: it is the line a user reads.
  if (!missing.unregistered.empty())
    throw kernel_not_instantiated_error(
        who + " runs on " + space.str() +
        ", but no device kernel was compiled into this program for it: name its type once in "
        "FUSOR_DEVICE_INSTANTIATE (how: below). Missing:" +
        list(missing.unregistered) + "\n" + std::string(gpu::instantiate_advice));
  if (!device_runtime_for(space).emulated() && !missing.without_cuda.empty())
    throw kernel_not_instantiated_error(
        who + " runs on " + space.str() +
        ", but no CUDA kernel was compiled into this program for it: name its type in FUSOR_DEVICE_INSTANTIATE "
        "in a .cu file nvcc compiles (how: below). Missing:" +
        list(missing.without_cuda) +
        "\nName its type in a .cu file of the program, compiled by nvcc: #include <fusor/device.hpp> and "
        "FUSOR_DEVICE_INSTANTIATE(decltype(f)) (see docs/gpu.md)");
  prog.target(backend_id::device, space, &gpu::backend::prepare_plan);
}

}  // namespace detail
}  // namespace fusor
