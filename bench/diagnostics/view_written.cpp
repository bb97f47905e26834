// Mistake: writing through the read-only view get_value(fusor::borrow) returns.
#include <fusor/fusor.hpp>

int main() {
  auto s = fusor::shared(xt::xtensor<float, 1>{1.f, 2.f});
  auto v = s.get_value(fusor::borrow);
  v(0) = 3.f;  // the view is read-only
  return static_cast<int>(v(0));
}
