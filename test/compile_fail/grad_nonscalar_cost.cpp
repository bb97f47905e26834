// fusor::grad of a cost that is not rank 0.
// expect: FUSOR_GRAD_NONSCALAR_COST
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
#ifndef FUSOR_SHOULD_COMPILE
  auto g = fusor::grad(w * w, w);
#else
  auto g = fusor::grad(fusor::sum(w * w), w);
#endif
  return g.str().empty() ? 1 : 0;
}
