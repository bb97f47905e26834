// fusor/memory/space.hpp — where a buffer lives (Kokkos' memory spaces).
#pragma once

#include <cstdint>
#include <string>

#include "fusor/core/config.hpp"

namespace fusor {

enum class space_kind : std::uint8_t { host, cuda };

/// A memory space: the host, or one CUDA device. A run-time value so that a
/// shared variable can be moved between spaces without changing its C++ type;
/// kernels check accessibility when they bind a buffer.
struct memory_space {
  space_kind kind = space_kind::host;
  int device = 0;

  friend constexpr bool operator==(const memory_space&, const memory_space&) = default;

  FUSOR_RUNTIME std::string str() const;
};

/// The host's memory space.
inline constexpr memory_space host{};

/// CUDA device `i`. Reaching it needs a CUDA build (meson -Dgpu=enabled).
constexpr memory_space cuda(int i = 0) { return memory_space{space_kind::cuda, i}; }

/// Whether code running on the host may dereference a pointer into `s`
/// (Kokkos' SpaceAccessibility<HostSpace, S>::accessible).
constexpr bool host_accessible(const memory_space& s) noexcept { return s.kind == space_kind::host; }

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/memory/impl/space.ipp"
#endif
