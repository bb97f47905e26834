// Built against an installed fusor by test/install_check.py: with the headers
// alone (fusor.pc), and with the run-time half from libfusor (fusor-runtime.pc,
// which defines FUSOR_SEPARATE_COMPILATION: the planner is then libfusor's).
#include <fusor/fusor.hpp>

int main() {
  xt::xarray<double> a = {1.0, 2.0};
  auto s = fusor::shared(a, fusor::borrow, "a");
  a(0) = 5.0;
  auto twice = fusor::function(fusor::inputs(), fusor::outputs(s * 2.0));
  const xt::xarray<double> r = twice();
  return s.get_value()(0) == 5.0 && s.name() == "a" && r(0) == 10.0 && r(1) == 4.0 ? 0 : 1;
}
