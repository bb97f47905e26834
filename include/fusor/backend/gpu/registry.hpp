// fusor/backend/gpu/registry.hpp — the device kernels a program compiled,
// found by the node types they were compiled for.
//
// A device kernel is compiled only where a unit asks for a device
// (FUSOR_DEVICE_INSTANTIATE, FUSOR_CUDA_INSTANTIATE; backend/gpu/
// instantiate.hpp), so that a program that never runs on a device pays
// nothing for the device's evaluators and emulated loops, and is never
// refused for a device's limits. A graph therefore names its device kernels
// by key — per node and role, the node's C++ type (the address of
// detail::type_tag<X>, one per type in a program) — and a plan prepared for a
// device looks each key up here. Registering the same key twice is harmless:
// every unit compiles the same kernel for the same type.
//
// Portable: g++ compiles it; no CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fusor/backend/gpu/kernels.hpp"
#include "fusor/compile/graph.hpp"

namespace fusor::gpu {

/// The role under which a multi-output kernel is registered (after the
/// node roles).
inline constexpr std::size_t multi_role = static_cast<std::size_t>(kernel_role::count);

class kernel_registry {
 public:
  FUSOR_RUNTIME static kernel_registry& instance();
  FUSOR_RUNTIME void add(std::size_t role, const void* key, const kernel_entry* entry);
  FUSOR_RUNTIME const kernel_entry* find(std::size_t role, const void* key) const;

 private:
  struct hash {
    std::size_t operator()(const std::pair<std::size_t, const void*>& k) const noexcept {
      return std::hash<const void*>{}(k.second) ^ (k.first * 0x9e3779b97f4a7c15ull);
    }
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::pair<std::size_t, const void*>, const kernel_entry*, hash> map_;
};

/// How a program compiles the device kernels it lacks (every message that
/// reports one ends with this).
inline constexpr const char* instantiate_advice =
    "a unit of the program must ask for them: FUSOR_DEVICE_INSTANTIATE(decltype(f)) at namespace scope, or "
    "fusor::instantiate_device<decltype(f)>() before f is built (#include <fusor/device.hpp>; in a .cu file "
    "compiled by nvcc this compiles the CUDA kernels as well); see docs/gpu.md";

/// The key of node type X's kernels.
template <class X>
FUSOR_FOLDED const void* kernel_key() noexcept {
  return &fusor::detail::type_tag<X>;
}

/// Whether a device runs kernels of role R. A reduction reading its operand
/// from a temporary (reduce_read) is a host plan's choice alone: a device
/// plan reduces the fused operand, so no unit compiles or registers that role
/// for a device, and a graph must not ask for it.
template <kernel_role R>
inline constexpr bool device_role_v = R != kernel_role::reduce_read;

/// An argument's upload to the device, converted to a dtype: a kernel that
/// depends on the dtype alone, and does its conversion on the host. Under
/// FUSOR_SEPARATE_COMPILATION libfusor compiles it once for every dtype
/// (backend.ipp) and no unit instantiates it; header-only, every unit that
/// builds a graph does (the eleven dtypes an argument may arrive in, for each
/// input's dtype), since any graph may be planned for a device.
#ifdef FUSOR_SEPARATE_COMPILATION
const kernel_entry* runtime_upload_kernel(dtype type);
#endif
template <element T>
const void* upload_kernel_entry() {
#ifdef FUSOR_SEPARATE_COMPILATION
  return runtime_upload_kernel(dtype_of<T>);
#else
  return &upload_kernel<T>::entry;
#endif
}

/// The device as a graph builder sees it: keys, not kernels (converting an
/// argument's dtype is the one kernel it names: upload_kernel_entry).
struct keyed_backend {
  static constexpr backend_id id = backend_id::device;
  template <kernel_role R, class X>
  FUSOR_FOLDED static const void* kernel() {
    if constexpr (device_role_v<R>) return kernel_key<X>();
    else return nullptr;
  }
  template <element T>
  static const void* convert_kernel() {
    return upload_kernel_entry<T>();
  }
  template <class... Xs>
  static const void* multi_kernel() {
    return kernel_key<std::tuple<Xs...>>();
  }
};

/// The device kernel a graph names for node n and role r, or null when no
/// unit of the program registered one.
inline const kernel_entry* registered_kernel(const graph_node& n, kernel_role r) {
  return kernel_registry::instance().find(static_cast<std::size_t>(r), n.kernel(backend_id::device, r));
}
inline const kernel_entry* registered_multi_kernel(const graph& g) {
  return kernel_registry::instance().find(multi_role, g.multi_output_kernel[static_cast<std::size_t>(backend_id::device)]);
}

/// What a graph lacks to run on a device: the nodes whose device kernels no
/// unit compiled (`unregistered`), and, for a real device, those compiled
/// without their CUDA launchers (`without_cuda`), as fusor prints them.
struct missing_device_kernels {
  std::vector<std::string> unregistered;
  std::vector<std::string> without_cuda;
};
inline missing_device_kernels find_missing_kernels(const graph& g) {
  missing_device_kernels out;
  if (g.multi_output_kernel[static_cast<std::size_t>(backend_id::device)]) {
    const kernel_entry* k = registered_multi_kernel(g);
    if (!k) out.unregistered.push_back("the outputs fused into one pass");
    else if (k->missing()) out.without_cuda.push_back("the outputs fused into one pass");
  }
  // Every role of a node is looked at before it is listed: a node whose
  // first kernel lacks its launcher (every kernel, on the emulated device)
  // may still lack a registration for another role.
  for (const graph_node& n : g.nodes) {
    bool unregistered = false, without_cuda = false;
    for (std::size_t r = 0; r < static_cast<std::size_t>(kernel_role::count); ++r) {
      if (!n.kernel(backend_id::device, static_cast<kernel_role>(r))) continue;
      const kernel_entry* k = registered_kernel(n, static_cast<kernel_role>(r));
      unregistered = unregistered || !k;
      without_cuda = without_cuda || (k && k->missing());
    }
    if (unregistered) out.unregistered.push_back(n.text);
    else if (without_cuda) out.without_cuda.push_back(n.text);
  }
  return out;
}

}  // namespace fusor::gpu

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/backend/gpu/impl/registry.ipp"
#endif
