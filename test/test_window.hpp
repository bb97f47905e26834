// A user type viewing part of someone else's memory, registered as a rank-1
// tensor: how the tests build borrowed buffers that overlap partially.
#pragma once

#include <cstddef>

#include <fusor/shared.hpp>

namespace testing_types {
struct window {
  double* p;
  std::size_t n;
};
}  // namespace testing_types

template <>
struct fusor::shared_constructor<testing_types::window> {
  using element_type = double;
  static constexpr int rank = 1;
  static fusor::dims shape(const testing_types::window& w) { return {w.n}; }
  static const double* data(const testing_types::window& w) { return w.p; }
  // get_value() would hand out a window on fusor's copy; the tests never call it.
  static testing_types::window make(const fusor::dims& d, const double* src) {
    return {const_cast<double*>(src), d[0]};
  }
};
