// '%' on floating-point operands.
// expect: '%' is defined for integer operands only
#include <fusor/fusor.hpp>

int main() {
#ifndef FUSOR_SHOULD_COMPILE
  fusor::vector<double> x{"x"};
  auto e = x % 2.0;
#else
  fusor::vector<int> x{"x"};
  auto e = x % 2;
#endif
  return e.str().empty() ? 1 : 0;
}
