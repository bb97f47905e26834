// fusor::grad with respect to an integer variable.
// expect: FUSOR_GRAD_INTEGER_TARGET
#include <fusor/fusor.hpp>

int main() {
#ifndef FUSOR_SHOULD_COMPILE
  auto w = fusor::shared(xt::xtensor<int, 1>{1, 2}, "w");
  auto g = fusor::grad(fusor::sum(fusor::cast<double>(w)), w);
#else
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  auto g = fusor::grad(fusor::sum(fusor::cast<double>(w)), w);
#endif
  return g.str().empty() ? 1 : 0;
}
