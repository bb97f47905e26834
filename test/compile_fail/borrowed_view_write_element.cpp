// Writing an element through get_value(borrow) must not compile: the view is
// read-only, so "do not modify a shared variable by side effect" is enforced.
// expect: read-only|assignment of read-only location|const
#include <fusor/fusor.hpp>

int main() {
  auto s = fusor::shared(xt::xarray<float>{1.f, 2.f});
  auto v = s.get_value(fusor::borrow);
#ifndef FUSOR_SHOULD_COMPILE
  v(0) = 3.f;
#endif
  return static_cast<int>(v(0));
}
