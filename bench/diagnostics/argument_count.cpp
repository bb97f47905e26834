// Mistake: calling a compiled function with fewer arguments than its inputs.
#include <fusor/fusor.hpp>

int main() {
  fusor::vector<double> x{"x"}, y{"y"};
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(x + y));
  const xt::xtensor<double, 1> v = {1.0, 2.0};
  auto r = f(v);  // two inputs, one argument
  return r(0) == 2.0 ? 0 : 1;
}
