// fusor::grad where every path from the target's type to the cost goes
// through operations without a gradient (here a comparison).
// expect: FUSOR_GRAD_DISCONNECTED
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
#ifndef FUSOR_SHOULD_COMPILE
  auto g = fusor::grad(fusor::sum(fusor::cast<double>(w > 1.0)), w);
#else
  auto g = fusor::grad(fusor::sum(fusor::cast<double>(w > 1.0) * w), w);
#endif
  return g.str().empty() ? 1 : 0;
}
