// Binding a value of another static rank to a symbolic input.
// expect: different static rank than the input
#include <fusor/fusor.hpp>

int main() {
  fusor::vector<double> x{"x"};
#ifndef FUSOR_SHOULD_COMPILE
  auto r = fusor::eval(x * 2.0, x = xt::xtensor<double, 2>{{1.0}});
#else
  auto r = fusor::eval(x * 2.0, x = xt::xtensor<double, 1>{1.0});
#endif
  return r(0) == 2.0 ? 0 : 1;
}
