// Mistake: passing doubles where the function's input is float (a downcast,
// refused by the input's casting rules unless it allows one).
#include <fusor/fusor.hpp>

int main() {
  fusor::vector<float> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(2.f * x));
  const xt::xtensor<double, 1> v = {1.0, 2.0};
  auto r = f(v);  // x is float
  return r(0) == 2.f ? 0 : 1;
}
