// Mistake: fusor::grad of a cost that is not a scalar.
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  auto g = fusor::grad(w * w, w);  // w * w is a vector
  return g.str().empty() ? 1 : 0;
}
