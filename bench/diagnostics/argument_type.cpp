// Mistake: passing a matrix where the function's input is a vector.
#include <fusor/fusor.hpp>

int main() {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(2.0 * x));
  const xt::xtensor<double, 2> m = {{1.0, 2.0}, {3.0, 4.0}};
  auto r = f(m);  // x is a vector
  return r(0) == 2.0 ? 0 : 1;
}
