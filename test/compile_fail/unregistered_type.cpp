// A type without a fusor::shared_constructor specialisation is refused at
// compile time, with a message that says what to do and a diagnostic that
// names the type.
// expect: T is not registered
// expect: shared_constructor
// expect: my_unregistered_point
#include <fusor/fusor.hpp>

struct my_unregistered_point {
  double x, y;
};

int main() {
#ifndef FUSOR_SHOULD_COMPILE
  auto s = fusor::shared(my_unregistered_point{1.0, 2.0});
  return s.has_value() ? 0 : 1;
#else
  auto s = fusor::shared(1.0);
  return s.has_value() ? 0 : 1;
#endif
}
