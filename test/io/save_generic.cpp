// A generic (non-tensor) shared variable has no NumPy representation: saving
// it is refused at compile time with a message that says which variables can
// be saved.
// expect: only tensor shared variables
// expect: generic shared variable
#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>
#include <fusor/io/npz.hpp>

struct run_config {
  int depth = 3;
};
template <>
struct fusor::shared_constructor<run_config> : fusor::generic_constructor<run_config> {};

int main() {
#ifndef FUSOR_SHOULD_COMPILE
  auto s = fusor::shared(run_config{}, "cfg");
  fusor::save(s, "cfg.npy");
#else
  auto s = fusor::shared(xt::xarray<float>{1, 2}, "x");
  fusor::save(s, "x.npy");
  fusor::save("x.npz", s);
#endif
  return s.has_value() ? 0 : 1;
}
