// fusor/shared/options.hpp — construction options of a shared variable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fusor/memory/space.hpp"

namespace fusor {

/// Options of `fusor::shared(value, [flag,] options)`. An aggregate, so that
/// call sites read `fusor::shared(v, {.name = "W", .strict = true})`; a plain
/// string is accepted as the name: `fusor::shared(v, "W")`.
struct shared_options {
  /// Used in every message about the variable, and as its entry name in .npz.
  std::string name{};
  /// Refuse any value whose dtype is not exactly the variable's (R28.4).
  bool strict = false;
  /// Accept lossy conversions (float64 -> float32, 8.23 -> 8), as NumPy's
  /// astype does (R28.5). Unset means false, except as Theano's `None`.
  std::optional<bool> allow_downcast{};
  /// Axes whose length is fixed to 1 (Theano's broadcastable pattern). Empty
  /// means none: shapes may change freely (R8).
  std::vector<bool> broadcastable{};
  /// Where the storage lives.
  memory_space space = host;
};

}  // namespace fusor
