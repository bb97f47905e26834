// Mistake: keeping a borrowed output (Out(y, fusor::borrow)) past the next
// call of its function, which rewrites the buffer it shows.
#include <cstdio>

#include <fusor/fusor.hpp>

int main() {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(2.0 * x, fusor::borrow)));
  auto first = f(xt::xtensor<double, 1>{1.0, 2.0});
  auto second = f(xt::xtensor<double, 1>{3.0, 4.0});  // rewrites first's buffer
  std::printf("%g %g\n", first(0), second(0));          // first is stale
  return 0;
}
