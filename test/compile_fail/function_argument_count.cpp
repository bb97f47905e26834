// Calling a function with the wrong number of arguments.
// expect: FUSOR_WRONG_ARGUMENT_COUNT
#include <fusor/fusor.hpp>

int main() {
  fusor::vector<double> x{"x"}, y{"y"};
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(x + y));
  const xt::xtensor<double, 1> v = {1.0};
#ifndef FUSOR_SHOULD_COMPILE
  auto r = f(v);
#else
  auto r = f(v, v);
#endif
  return r(0) == 2.0 ? 0 : 1;
}
