// An update whose dtype differs from its variable's is refused when the
// function is built — at compile time, since both dtypes are static — with a
// message that suggests fusor::cast (R55, Theano #2997).
// expect: FUSOR_UPDATE_DTYPE_MISMATCH
// expect: fusor::cast
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<float, 1>{1.f, 2.f}, "w");
  fusor::vector<double> g{"g"};
#ifndef FUSOR_SHOULD_COMPILE
  auto f = fusor::function(fusor::inputs(g), fusor::updates(fusor::update(w, w - 0.1 * g)));
#else
  auto f = fusor::function(fusor::inputs(g), fusor::updates(fusor::update(w, w - fusor::cast<float>(0.1 * g))));
#endif
  f(xt::xtensor<double, 1>{1.0, 1.0});
  return w.get_value()(0) < 1.f ? 0 : 1;
}
