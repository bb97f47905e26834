// fusor/memory/impl/space.ipp — a memory space's name (memory/space.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/memory/space.hpp"

namespace fusor {

FUSOR_RUNTIME std::string memory_space::str() const {
  return kind == space_kind::host ? std::string("host") : "cuda:" + std::to_string(device);
}

}  // namespace fusor
