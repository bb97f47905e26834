// fusor::dot of a rank-3 tensor: dot takes vectors and matrices, and the
// refusal says what to do instead.
// expect: FUSOR_DOT_RANK
// expect: reshape
#include <fusor/fusor.hpp>

int main() {
  fusor::matrix<double> b{"b"};
#ifndef FUSOR_SHOULD_COMPILE
  fusor::tensor<double, 3> a{"a"};
#else
  fusor::matrix<double> a{"a"};
#endif
  auto e = fusor::dot(a, b);
  return e.str().empty() ? 1 : 0;
}
