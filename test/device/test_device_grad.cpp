// Gradients of test_numpy_cases_grad.cpp on a device: masked softmax rows and
// prod's second derivative with zeros, against NumPy's values and the host's.
// Built by g++ for the emulated device only: nvcc's front end takes many
// minutes over these second-derivative types (the GPU suite's device tests
// cover gradients through selections).
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include <xtensor/xadapt.hpp>

#include "../reference/numpy_cases.hpp"
#include "device_harness.hpp"

using device_test::check_close;
using device_test::dev;
using device_test::fixture;
using device_test::spaces;

TEST_CASE_FIXTURE(fixture, "masked softmax gradients on a device, as NumPy's") {
  using mat = xt::xtensor<double, 2>;
  const mat xv = xt::adapt(numpy_cases::masked_x, std::array<std::size_t, 2>{3, 4});
  const mat wv = xt::adapt(numpy_cases::masked_weight, std::array<std::size_t, 2>{3, 4});
  auto X = fusor::shared(xv, {.name = "X", .space = dev});
  auto W = fusor::shared(wv, {.name = "W", .space = dev});
  const auto masked = fusor::abs(X) == std::numeric_limits<double>::infinity();
  const auto cost = fusor::sum(fusor::where(masked, 0.0, W * fusor::log_softmax(X, 1)));
  auto g = device_test::function(fusor::inputs(), fusor::outputs(fusor::grad(cost, X), fusor::softmax(X, 1)));
  auto [gx, sm] = g();
  for (std::size_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(gx.flat(i) == doctest::Approx(numpy_cases::masked_log_softmax_grad[i]).epsilon(1e-13));
    CHECK(sm.flat(i) == doctest::Approx(numpy_cases::masked_softmax[i]).epsilon(1e-14));
  }
}


TEST_CASE_FIXTURE(fixture, "the second derivative of prod with zeros in a row, on a device as on the host") {
  const xt::xtensor<double, 2> x0{{1.0, 2.0, 3.0}, {0.0, 5.0, 6.0}, {0.0, 0.0, 9.0}};
  const xt::xtensor<double, 2> v0{{0.5, -1.0, 0.25}, {1.0, 2.0, -0.5}, {1.5, -2.0, 1.0}};
  xt::xarray<double> outs[2];
  for (int k = 0; k < 2; ++k) {
    auto X = fusor::shared(x0, {.name = "X", .space = spaces[k]});
    auto V = fusor::shared(v0, {.name = "V", .space = spaces[k]});
    const auto gx = fusor::grad(fusor::sum(fusor::prod(X, 1)), X);
    auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::grad(fusor::sum(gx * V), X)));
    outs[k] = f();
  }
  check_close(outs[1], outs[0], 1e-14);
  // By hand: H v for rows (1, 2, 3), (0, 5, 6), (0, 0, 9).
  const xt::xarray<double> want{{-1.0 * 3 + 0.25 * 2, 0.5 * 3 + 0.25 * 1, 0.5 * 2 - 1.0 * 1},
                                {2.0 * 6 - 0.5 * 5, 1.0 * 6 - 0.5 * 0, 1.0 * 5 + 2.0 * 0},
                                {-2.0 * 9 + 1.0 * 0, 1.5 * 9 + 1.0 * 0, 1.5 * 0 - 2.0 * 0}};
  check_close(outs[1], want, 1e-14);
}

// A kernel reads a reference whose target, fused, would be large from memory:
// the target is kept, computed once by a kernel of its own (expr/fusion.hpp).
// Here the adjoints of s and m nest; fused, they made one kernel of 4.1
// million leaves. Both backends' evaluators, the graph and the plan agree on it.
TEST_CASE_FIXTURE(fixture, "a second derivative through nested references, on a device as on the host") {
  const xt::xtensor<double, 1> w0{0.3, -0.7, 0.2};
  const xt::xtensor<double, 1> d0{0.5, -1.0, 0.25};
  xt::xarray<double> outs[2];
  for (int k = 0; k < 2; ++k) {
    auto w = fusor::shared(w0, {.name = "w", .space = spaces[k]});
    auto d = fusor::shared(d0, {.name = "d", .space = spaces[k]});
    const auto m = fusor::mean(w);
    const auto s = fusor::sigmoid(m);
    const auto g = fusor::grad(fusor::sum(s * s * m), w);
    auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::grad(fusor::sum(g * d), w)));
    outs[k] = f();
    CHECK(f.plan().find(" materialize ") != std::string::npos);  // a kept target's step
  }
  check_close(outs[1], outs[0], 1e-14);
  // f(m) = sigmoid(m)^2 m, m = mean(w): H d = f''(m) sum(d) / n^2 in every element.
  const double mv = (w0(0) + w0(1) + w0(2)) / 3, sv = 1 / (1 + std::exp(-mv));
  const double s1 = sv * (1 - sv), s2 = s1 * (1 - 2 * sv);
  const double f2 = 2 * mv * (s1 * s1 + sv * s2) + 4 * sv * s1;
  const double want = f2 * (d0(0) + d0(1) + d0(2)) / 9;
  check_close(outs[0], xt::xarray<double>{want, want, want}, 1e-12);
}
