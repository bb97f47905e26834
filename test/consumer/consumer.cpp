// Built against an installed fusor (headers + fusor.pc) by test/install_check.py.
#include <fusor/fusor.hpp>

int main() {
  xt::xarray<double> a = {1.0, 2.0};
  auto s = fusor::shared(a, fusor::borrow, "a");
  a(0) = 5.0;
  return s.get_value()(0) == 5.0 && s.name() == "a" ? 0 : 1;
}
