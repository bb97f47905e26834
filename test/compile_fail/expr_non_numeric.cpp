// A symbolic input of a non-numeric element type.
// expect: FUSOR_NOT_A_NUMERIC_DTYPE
#include <string>

#include <fusor/fusor.hpp>

int main() {
#ifndef FUSOR_SHOULD_COMPILE
  fusor::matrix<std::string> x{"x"};
#else
  fusor::matrix<double> x{"x"};
#endif
  return x.name() == "x" ? 0 : 1;
}
