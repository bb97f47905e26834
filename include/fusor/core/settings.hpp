// fusor/core/settings.hpp — run-time configuration, read at every use.
#pragma once

#include <atomic>

namespace fusor {

/// Process-wide settings (Theano's `config`). Each field is read at the moment
/// it matters, never cached, so a change takes effect at the next access.
struct settings {
  /// Theano's config.shared.value_borrows: whether `s.value()` and
  /// `s.value(v)` borrow (true, the default) or copy (false).
  std::atomic<bool> shared_value_borrows{true};
};

/// The settings object: `fusor::config().shared_value_borrows = false;`.
inline settings& config() noexcept {
  static settings instance;
  return instance;
}

}  // namespace fusor
