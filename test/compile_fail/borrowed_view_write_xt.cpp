// The xtensor face of a borrowed view is read-only too: compound assignment
// through .xt() must not compile.
// expect: read-only|const
#include <fusor/fusor.hpp>

int main() {
  auto s = fusor::shared(xt::xtensor<double, 2>{{1., 2.}, {3., 4.}});
  auto v = s.get_value(fusor::borrow);
#ifndef FUSOR_SHOULD_COMPILE
  v.xt() += 1.0;
#endif
  return static_cast<int>(v.xt()(0, 0));
}
