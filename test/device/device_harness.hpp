// The device the device tests run on: an emulated one (every CI run, no GPU
// needed), or a real CUDA device when the test is built into the GPU suite
// (FUSOR_TEST_REAL_DEVICE, linked with fusor's CUDA runtime; without a device
// that binary reports itself skipped before running anything).
#pragma once

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <vector>

#include <doctest/doctest.h>

#include <fusor/device.hpp>
#include <fusor/fusor.hpp>
#include <fusor/memory/emulated_device.hpp>
#ifdef FUSOR_TEST_REAL_DEVICE
#include <fusor/cuda.hpp>
#endif

namespace device_test {

/// Holds the emulation for the duration of a test (nothing with a real device).
struct fixture {
#ifndef FUSOR_TEST_REAL_DEVICE
  fusor::emulated_devices emulation{fusor::emulation_options{.devices = 2}};
#endif
  fusor::device_runtime& runtime() const { return *fusor::current_device_runtime(); }
  bool emulated() const { return runtime().emulated(); }
  fusor::device_memory_stats memory(int i = 0) const { return runtime().memory(i); }
};

inline constexpr fusor::memory_space dev = fusor::cuda(0);

/// fusor::function, with its device kernels compiled and registered first,
/// as a program asks for them (fusor/device.hpp): the emulated device's loops
/// in this g++ unit; with the CUDA kernels when the GPU suite compiles the
/// same tests with nvcc.
template <class... A>
auto function(A&&... args) {
  fusor::instantiate_device<decltype(fusor::function(std::forward<A>(args)...))>();
  return fusor::function(std::forward<A>(args)...);
}

/// Likewise for an expression evaluated by eval or assign.
template <class X>
const X& kernels(const X& expr) {
  fusor::instantiate_device<fusor::as_expression_t<const X&>>();
  return expr;
}

/// An array's elements as host values (the array may be on a device).
template <class E>
std::vector<E> host_values(const fusor::array<E>& a) {
  std::vector<E> out(a.size());
  if (!out.empty()) fusor::copy_bytes(out.data(), fusor::host, a.data(), a.space(), a.bytes());
  return out;
}
/// The spaces every comparison test runs in: the host first, then the device.
inline constexpr fusor::memory_space spaces[] = {fusor::host, dev};

/// Equal within `tol` (relative), NaN where NaN.
inline void check_close(const xt::xarray<double>& a, const xt::xarray<double>& b, double tol = 1e-12) {
  REQUIRE(a.shape() == b.shape());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a.data()[i]), y = static_cast<double>(b.data()[i]);
    if (std::isnan(x) || std::isnan(y)) {
      CHECK(std::isnan(x) == std::isnan(y));
    } else {
      CHECK(x == doctest::Approx(y).epsilon(tol));
    }
  }
}

/// Deterministic test values of a shape, varied and not monotone.
inline xt::xarray<double> ramp(std::initializer_list<std::size_t> shape, double start = 0.5, double step = 0.25) {
  xt::xarray<double> a = xt::xarray<double>::from_shape(shape);
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = start + step * static_cast<double>(i % 13) - 0.1 * (i % 3);
  return a;
}

}  // namespace device_test
