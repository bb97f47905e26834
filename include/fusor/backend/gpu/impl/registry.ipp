// fusor/backend/gpu/impl/registry.ipp — the registry of the device kernels a
// program compiled (backend/gpu/registry.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/backend/gpu/registry.hpp"

namespace fusor::gpu {

FUSOR_RUNTIME kernel_registry& kernel_registry::instance() {
  static kernel_registry r;
  return r;
}

FUSOR_RUNTIME void kernel_registry::add(std::size_t role, const void* key, const kernel_entry* entry) {
  std::lock_guard lock(mutex_);
  map_[{role, key}] = entry;
}

FUSOR_RUNTIME const kernel_entry* kernel_registry::find(std::size_t role, const void* key) const {
  if (!key) return nullptr;
  std::lock_guard lock(mutex_);
  const auto it = map_.find({role, key});
  return it == map_.end() ? nullptr : it->second;
}

}  // namespace fusor::gpu
