// Device kernels are compiled only where a unit asks for them
// (fusor/device.hpp). This program links two units that build the same
// function type: this one asks for a device (FUSOR_DEVICE_INSTANTIATE), the
// other (units_host.cpp) does not. Both run it correctly, on the host and on
// the (emulated) device, and a function whose device kernels no unit
// compiled is refused when it is built, saying what to do.
#include <doctest/doctest.h>

#include <string>

#include "device_harness.hpp"
#include "units_model.hpp"

FUSOR_DEVICE_INSTANTIATE(decltype(units_test::make_step(std::declval<fusor::shared<units_test::vector_t>&>())))

using device_test::dev;
using device_test::fixture;

namespace {
const units_test::vector_t xv{0.5, -1.0, 2.0, 0.25};
const units_test::vector_t wv{0.1, 0.2, -0.3, 0.4};
}  // namespace

TEST_CASE_FIXTURE(fixture, "one function type, built in a unit with device support and in one without") {
  const auto [want_y, want_w] = units_test::expected(xv, wv);
  // here, on the device
  auto w = fusor::shared(wv, {.name = "w", .space = dev});
  auto step = units_test::make_step(w);
  const units_test::vector_t y = step(xv);
  CHECK(step.space() == dev);
  CHECK(xt::allclose(y, want_y, 1e-14, 0.0));
  CHECK(xt::allclose(w.get_value(), want_w, 1e-14, 0.0));
  // here, on the host
  auto wh = fusor::shared(wv, "w");
  auto host_step = units_test::make_step(wh);
  CHECK(xt::allclose(units_test::vector_t(host_step(xv)), want_y, 1e-14, 0.0));
  // the other unit, on the host
  const auto [hy, hw] = units_test::run_on_host(xv, wv);
  CHECK(xt::allclose(hy, want_y, 1e-14, 0.0));
  CHECK(xt::allclose(hw, want_w, 1e-14, 0.0));
  // the other unit, on the device: the kernels this unit registered serve the program
  const auto [dy, dw] = units_test::run_in(dev, xv, wv);
  CHECK(xt::allclose(dy, want_y, 1e-14, 0.0));
  CHECK(xt::allclose(dw, want_w, 1e-14, 0.0));
}

TEST_CASE_FIXTURE(fixture, "a function on a device whose kernels no unit compiled is refused when it is built") {
  units_test::build_other_in(fusor::host, wv);  // on the host it needs no device kernel
  try {
    units_test::build_other_in(dev, wv);
    FAIL("built without device kernels");
  } catch (const fusor::kernel_not_instantiated_error& e) {
    const std::string what = e.what();
    CHECK(what.find("no device kernel was compiled") != std::string::npos);
    CHECK(what.find("tanh(w) * 3") != std::string::npos);  // names the expression
    CHECK(what.find("FUSOR_DEVICE_INSTANTIATE") != std::string::npos);  // says what to do
  }
}

// A device plan reduces a reduction's fused operand; reading the operand from
// a temporary (the reduce_read role) is a host plan's choice. A graph must not
// ask a device for that role: no unit registers it, and on a GPU every
// function with a float sum was refused while the emulated device, whose
// kernels all lack CUDA launchers, stopped looking at a node's first role.
TEST_CASE_FIXTURE(fixture, "a device is asked for no kernel that only host plans use, and every role of a node is checked") {
  fusor::matrix<double> x{"x"};
  fusor::graph g;
  fusor::graph_builder<fusor::cpu::backend, fusor::gpu::keyed_backend> b(g);
  const int root = b.add_root(fusor::sum(x * 2.0, 0));
  const fusor::graph_node& n = g[root];
  CHECK(n.kernel(fusor::backend_id::host, fusor::kernel_role::reduce_read) != nullptr);
  CHECK(n.kernel(fusor::backend_id::device, fusor::kernel_role::reduce_read) == nullptr);
  CHECK(n.kernel(fusor::backend_id::device, fusor::kernel_role::reduce) != nullptr);

  // One role registered without its CUDA launcher, another not registered at
  // all: the node is listed as unregistered, whatever the roles' order.
  static constexpr fusor::gpu::kernel_entry no_launcher{nullptr, [] { return "a launcher"; }};
  fusor::graph h;
  fusor::graph_node two_roles;
  two_roles.text = "two roles";
  static int keys[2];  // registry keys: addresses that outlive the test
  two_roles.kernels[static_cast<std::size_t>(fusor::backend_id::device)][static_cast<std::size_t>(fusor::kernel_role::group)] = &keys[0];
  two_roles.kernels[static_cast<std::size_t>(fusor::backend_id::device)][static_cast<std::size_t>(fusor::kernel_role::reduce)] = &keys[1];
  h.nodes.push_back(two_roles);
  fusor::gpu::kernel_registry::instance().add(static_cast<std::size_t>(fusor::kernel_role::group), &keys[0], &no_launcher);
  const fusor::gpu::missing_device_kernels missing = fusor::gpu::find_missing_kernels(h);
  REQUIRE(missing.unregistered.size() == 1);
  CHECK(missing.unregistered[0] == "two roles");
  CHECK(missing.without_cuda.empty());

  // Registered for both roles, one without a launcher: without CUDA code.
  fusor::gpu::kernel_registry::instance().add(static_cast<std::size_t>(fusor::kernel_role::reduce), &keys[1], &no_launcher);
  const fusor::gpu::missing_device_kernels lacking = fusor::gpu::find_missing_kernels(h);
  CHECK(lacking.unregistered.empty());
  REQUIRE(lacking.without_cuda.size() == 1);
  CHECK(lacking.without_cuda[0] == "two roles");
}
