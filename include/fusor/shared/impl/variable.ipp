// fusor/shared/impl/variable.ipp — a record entering and leaving the registry
// of live records (shared/variable.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/shared/variable.hpp"

namespace fusor {

FUSOR_RUNTIME variable_base::variable_base(shared_options options)
    : options_(std::move(options)), id_(detail::next_variable_id()) {
  auto& r = detail::registry();
  std::lock_guard lock(r.mutex);
  next_ = r.head;
  if (next_) next_->prev_ = this;
  r.head = this;
}

FUSOR_RUNTIME variable_base::~variable_base() {
  auto& r = detail::registry();
  std::lock_guard lock(r.mutex);
  if (prev_) prev_->next_ = next_;
  else r.head = next_;
  if (next_) next_->prev_ = prev_;
}

}  // namespace fusor
