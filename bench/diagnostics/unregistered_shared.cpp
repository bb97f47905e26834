// Mistake: fusor::shared of a type fusor does not know (no
// fusor::shared_constructor specialisation).
#include <fusor/fusor.hpp>

struct point {
  double x, y;
};

int main() {
  auto s = fusor::shared(point{1.0, 2.0});
  return s.has_value() ? 0 : 1;
}
