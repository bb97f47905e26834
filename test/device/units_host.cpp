// The second unit of test_device_units: it builds the same function type as
// test_device_units.cpp, but asks for no device — it compiles no device
// kernel. Linked together, both must run correctly (no definition of one
// differs between the units).
#include "units_model.hpp"

namespace units_test {

std::pair<vector_t, vector_t> run_in(const fusor::memory_space& space, const vector_t& x, const vector_t& w0) {
  auto w = fusor::shared(w0, {.name = "w", .space = space});
  auto step = make_step(w);
  vector_t y = step(x);
  return {y, w.get_value()};
}

std::pair<vector_t, vector_t> run_on_host(const vector_t& x, const vector_t& w) { return run_in(fusor::host, x, w); }

void build_other_in(const fusor::memory_space& space, const vector_t& w0) {
  auto w = fusor::shared(w0, {.name = "w", .space = space});
  auto other = make_other(w);
  (void)other;
}

}  // namespace units_test
