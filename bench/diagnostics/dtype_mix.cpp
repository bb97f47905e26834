// Mistake: updating a float variable with a double expression, no cast.
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<float, 1>{1.f, 2.f}, "w");
  fusor::vector<double> g{"g"};
  auto f = fusor::function(fusor::inputs(g), fusor::updates(fusor::update(w, w - 0.1 * g)));
  f(xt::xtensor<double, 1>{1.0, 1.0});
  return w.get_value()(0) < 1.f ? 0 : 1;
}
