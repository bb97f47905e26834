// fusor/core/impl/dims.ipp — a shape's printing and its refusals (core/dims.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/core/dims.hpp"

namespace fusor {

FUSOR_RUNTIME std::string dims::str() const {
  std::string s = "(";
  for (std::size_t i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(extent_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

FUSOR_RUNTIME std::string too_large(const dims& d, dtype t) {
  return "shape " + d.str() + " of " + std::string(name(t)) +
         " is too large: its size in bytes overflows a signed 64-bit integer (NumPy's limit, 2^63 - 1 bytes)";
}

namespace detail {
FUSOR_RUNTIME void refuse_shape(const who_ref& who, std::size_t rank, std::uint32_t broadcastable, const dims& d,
                                dtype type) {
  if (d.rank() != rank)
    throw rank_error(who() + ": wrong number of dimensions: expected " + std::to_string(rank) + ", got " +
                     std::to_string(d.rank()) + " with shape " + d.str());
  if (const int i = broadcast_violation(broadcastable, d); i >= 0)
    throw shape_error(who() + ": axis " + std::to_string(i) + " is broadcastable and must have length 1; received shape " +
                      d.str());
  throw shape_error(who() + ": received a value of " + too_large(d, type));
}
}  // namespace detail

}  // namespace fusor
