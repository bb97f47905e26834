// fusor/expr/impl/collective.ipp — a graph's table of collectives and a call's
// agreement (expr/collective.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/expr/collective.hpp"

namespace fusor {

FUSOR_RUNTIME int collective_table::add(std::shared_ptr<const collective_op> op) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i] == op) return static_cast<int>(i);
  ops.push_back(FUSOR_MOVE(op));
  return static_cast<int>(ops.size()) - 1;
}

FUSOR_RUNTIME void collective_table::agree(std::uint64_t signature, const std::string& what, bool again) const {
  agreed = true;  // an error here is every process's: no agreement from the error path
  for_each_group([&](const collective_op& op) { op.agree(true, signature, what); });
  agreed = !again;
}

FUSOR_RUNTIME void collective_table::abandon() const {
  if (agreed) return;
  agreed = true;
  for_each_group([](const collective_op& op) { op.agree(false, 0, std::string()); });
}

FUSOR_RUNTIME void collective_scope::leave() const noexcept {
  if (std::uncaught_exceptions() <= exceptions_) return;
  try {
    t_.abandon();
  } catch (...) {  // the call's own error is the one to report
  }
}

}  // namespace fusor
