// Assigning an expression of another static rank to a shared variable.
// expect: FUSOR_RANK_MISMATCH
#include <fusor/fusor.hpp>

int main() {
  auto v = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0});
  fusor::matrix<double> m{"m"};
#ifndef FUSOR_SHOULD_COMPILE
  fusor::assign(v, m * 2.0, m = xt::xtensor<double, 2>{{1.0, 2.0}});
#else
  fusor::assign(v, fusor::sum(m, 0), m = xt::xtensor<double, 2>{{1.0, 2.0}});
#endif
  return v.get_value()(0) > 0 ? 0 : 1;
}
