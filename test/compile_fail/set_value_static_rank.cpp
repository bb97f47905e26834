// When both ranks are known at compile time, giving a shared variable a value
// of another rank is a compile error (its rank never changes).
// expect: static rank differs from the variable's
#include <fusor/fusor.hpp>

int main() {
  auto s = fusor::shared(xt::xtensor<float, 2>{{1.f, 2.f}});
#ifndef FUSOR_SHOULD_COMPILE
  s.set_value(xt::xtensor<float, 1>{1.f, 2.f});
#else
  s.set_value(xt::xtensor<float, 2>{{3.f, 4.f}});
#endif
  return s.get_value()(0, 0) == 3.f ? 0 : 1;
}
