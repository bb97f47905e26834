// Mistake: fusor::grad with respect to an integer variable.
#include <fusor/fusor.hpp>

int main() {
  auto w = fusor::shared(xt::xtensor<int, 1>{1, 2}, "w");
  auto g = fusor::grad(fusor::sum(fusor::cast<double>(w) * 2.0), w);  // w holds ints
  return g.str().empty() ? 1 : 0;
}
