// The raw pointer of a borrowed view is a pointer to const.
// expect: read-only|const
#include <fusor/fusor.hpp>

int main() {
  std::vector<int> values{1, 2, 3};
  auto s = fusor::shared(values, fusor::borrow);
  auto v = s.get_value(fusor::borrow);
#ifndef FUSOR_SHOULD_COMPILE
  v.data()[0] = 7;
#endif
  return v.data()[0];
}
