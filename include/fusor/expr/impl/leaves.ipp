// fusor/expr/impl/leaves.ipp — the identities of symbolic inputs and constants (expr/leaves.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/expr/leaves.hpp"

namespace fusor::detail {

FUSOR_RUNTIME std::uint64_t next_input_id() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

FUSOR_RUNTIME std::shared_ptr<const input_info> make_input_info(std::string name, std::vector<bool> broadcastable,
                                                                int rank) {
  if (!broadcastable.empty() && broadcastable.size() != static_cast<std::size_t>(rank))
    throw value_error("fusor input '" + name + "': the broadcastable pattern has " +
                      std::to_string(broadcastable.size()) + " entries, but the input has rank " +
                      std::to_string(rank));
  return std::make_shared<const input_info>(input_info{FUSOR_MOVE(name), next_input_id(), FUSOR_MOVE(broadcastable)});
}

FUSOR_RUNTIME std::string next_constant_name() {
  static std::atomic<std::uint64_t> counter{0};
  return "constant#" + std::to_string(++counter);
}

}  // namespace fusor::detail
