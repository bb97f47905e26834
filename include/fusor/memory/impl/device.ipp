// fusor/memory/impl/device.ipp — finding a device's runtime, and copies between
// spaces (memory/device.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/memory/device.hpp"

namespace fusor {

FUSOR_RUNTIME device_runtime* current_device_runtime() noexcept {
  auto& r = detail::runtimes();
  if (device_runtime* e = r.emulation.load(std::memory_order_acquire)) return e;
  if (auto get = r.linked.load(std::memory_order_acquire)) return get();
  return nullptr;
}

FUSOR_RUNTIME device_runtime& device_runtime_for(const memory_space& space) {
  if (host_accessible(space))
    throw space_error("fusor: internal error: memory space '" + space.str() + "' is the host, not a device");
  device_runtime* rt = current_device_runtime();
  if (!rt)
    throw device_unavailable_error(
        "fusor: memory space '" + space.str() +
        "' needs a device runtime, and this program has none: include <fusor/cuda.hpp> and link fusor's CUDA "
        "runtime (pkg-config fusor-cuda; built with meson -Dgpu=enabled when nvcc is found). On a machine without "
        "a GPU, fusor::emulated_devices (fusor/memory/emulated_device.hpp) emulates one for tests");
  const int n = rt->device_count();
  if (n == 0)
    throw device_unavailable_error("fusor: memory space '" + space.str() + "' cannot be used: " +
                                   rt->unavailable_reason());
  if (space.device < 0 || space.device >= n)
    throw device_unavailable_error("fusor: memory space '" + space.str() + "' does not exist: this machine has " +
                                   std::to_string(n) + " device" + (n == 1 ? "" : "s") + " (" + rt->name() +
                                   "), numbered from 0");
  return *rt;
}

namespace detail {
FUSOR_RUNTIME void copy_device_bytes(void* dst, const memory_space& dst_space, const void* src,
                                     const memory_space& src_space, std::size_t bytes) {
  const bool dh = host_accessible(dst_space), sh = host_accessible(src_space);
  if (dh) {
    device_runtime_for(src_space).copy(src_space.device, dst, src, bytes, copy_direction::device_to_host);
  } else if (sh) {
    device_runtime_for(dst_space).copy(dst_space.device, dst, src, bytes, copy_direction::host_to_device);
  } else {
    if (dst_space != src_space)
      throw space_error("fusor: a copy from '" + src_space.str() + "' to '" + dst_space.str() +
                        "': fusor copies between the host and a device, or within one device");
    device_runtime_for(dst_space).copy(dst_space.device, dst, src, bytes, copy_direction::device_to_device);
  }
}
}  // namespace detail

}  // namespace fusor
