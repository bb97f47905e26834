// Mistake: an update whose expression has another static rank than its
// variable (a vector updated with a matrix-shaped expression).
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  fusor::matrix<double> g{"g"};
  auto f = fusor::function(fusor::inputs(g), fusor::updates(fusor::update(w, w - 0.1 * g)));
  f(xt::xtensor<double, 2>{{1.0, 1.0}});
  return w.get_value()(0) < 1.0 ? 0 : 1;
}
