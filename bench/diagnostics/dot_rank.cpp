// Mistake: fusor::dot of a rank-3 tensor and a matrix.
#include <fusor/fusor.hpp>

int main() {
  fusor::tensor<double, 3> a{"a"};
  fusor::matrix<double> b{"b"};
  auto e = fusor::dot(a, b);  // dot takes vectors and matrices
  return e.str().empty() ? 1 : 0;
}
