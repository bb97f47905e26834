// A compile-time reduction axis beyond the static rank.
// expect: FUSOR_REDUCTION_AXIS_OUT_OF_RANGE
#include <fusor/fusor.hpp>

int main() {
  fusor::matrix<double> x{"x"};
#ifndef FUSOR_SHOULD_COMPILE
  auto e = fusor::sum<2>(x);
#else
  auto e = fusor::sum<1>(x);
#endif
  return e.str().empty() ? 1 : 0;
}
