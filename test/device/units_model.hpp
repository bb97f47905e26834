// The function both units of test_device_units build: one type, built in a
// unit that asks for a device (test_device_units.cpp) and in one that does
// not (units_host.cpp).
#pragma once

#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

namespace units_test {

using vector_t = xt::xtensor<double, 1>;

/// y = 2 x + exp(w) - sum(w); w <- w - 0.5 * y.
inline auto make_step(fusor::shared<vector_t>& w) {
  fusor::vector<double> x{"x"};
  auto y = 2.0 * x + fusor::exp(w) - fusor::sum(w);
  return fusor::function(fusor::inputs(x), fusor::outputs(y), fusor::updates(fusor::update(w, w - 0.5 * y)));
}

/// Another function, whose device kernels no unit of the program compiles.
inline auto make_other(fusor::shared<vector_t>& w) {
  return fusor::function(fusor::inputs(), fusor::outputs(fusor::tanh(w) * 3.0));
}

/// What the step computes, by hand: (y, w after).
inline std::pair<vector_t, vector_t> expected(const vector_t& x, const vector_t& w) {
  vector_t y = w;
  double s = 0;
  for (double v : w) s += v;
  for (std::size_t i = 0; i < w.size(); ++i) y(i) = 2.0 * x(i) + std::exp(w(i)) - s;
  vector_t after = w;
  for (std::size_t i = 0; i < w.size(); ++i) after(i) = w(i) - 0.5 * y(i);
  return {y, after};
}

// Defined in units_host.cpp, a unit that never includes <fusor/device.hpp>.
/// Builds make_step over host variables and runs it once: (y, w after).
std::pair<vector_t, vector_t> run_on_host(const vector_t& x, const vector_t& w);
/// Builds make_step over a variable in `space` and runs it once.
std::pair<vector_t, vector_t> run_in(const fusor::memory_space& space, const vector_t& x, const vector_t& w);
/// Builds make_other over a variable in `space` (its kernels are nowhere).
void build_other_in(const fusor::memory_space& space, const vector_t& w);

}  // namespace units_test
