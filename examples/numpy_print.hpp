// A NumPy-style printer for the examples, so that their output reads like the
// Python snippets they reproduce: [1. 1.], [[1 2]\n [3 4]].
#pragma once

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>

namespace examples {

template <class E>
std::string scalar_str(E v) {
  if constexpr (std::is_same_v<E, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<E>) {
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e16) {
      std::ostringstream os;
      os << static_cast<long long>(v) << ".";
      return os.str();
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.8g", static_cast<double>(v));
    return buf;
  } else {
    return std::to_string(+v);
  }
}

/// Prints any value with data(), size() and a shape of extents, row-major.
template <class V>
std::string numpy_str(const V& v) {
  const auto* p = v.data();
  std::size_t rank = 0, extents[8] = {};
  for (auto e : v.shape()) extents[rank++] = static_cast<std::size_t>(e);
  if (rank == 0) return scalar_str(*p);
  std::string out;
  std::size_t index = 0;
  auto rec = [&](auto& self, std::size_t axis) -> void {
    out += "[";
    for (std::size_t i = 0; i < extents[axis]; ++i) {
      if (i) out += axis + 1 == rank ? " " : "\n" + std::string(axis + 1, ' ');
      if (axis + 1 == rank) out += scalar_str(p[index++]);
      else self(self, axis + 1);
    }
    out += "]";
  };
  rec(rec, 0);
  return out;
}

}  // namespace examples
