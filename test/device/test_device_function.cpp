// Compiled functions, eval and assign whose shared variables live on a device:
// the same plans as on the host, run by the device backend. Every test body
// runs once with host variables and once with device variables and compares
// what comes out — values, and how updates were written — so the device path
// is held to the host's behaviour. Run on an emulated device in every CI run,
// and on a real one in the GPU suite.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "device_harness.hpp"

using device_test::dev;
using device_test::fixture;
using device_test::check_close;
using device_test::host_values;
using device_test::ramp;
using device_test::spaces;

TEST_CASE_FIXTURE(fixture, "a fused elementwise function with broadcasting: every kind of output, on both spaces") {
  const auto xv = ramp({3, 4});
  xt::xarray<double> results[2][3];
  for (int k = 0; k < 2; ++k) {
    fusor::matrix<double> x{"x"};
    auto W = fusor::shared(ramp({1, 4}, -1.0), {.name = "W", .space = spaces[k]});
    auto y = 2.0 * x + fusor::exp(W) - fusor::sigmoid(x * W);
    auto f = device_test::function(fusor::inputs(x), fusor::outputs(fusor::Out(y), fusor::Out(y * 3.0, fusor::borrow),
                                                              fusor::Out(y - 1.0, fusor::internal_type)));
    CHECK(f.space() == spaces[k]);
    auto [plain, borrowed, internal] = f(xv);
    CHECK(internal.space() == spaces[k]);
    results[k][0] = plain;
    results[k][1] = borrowed.xt();
    results[k][2] = xt::adapt(host_values(internal), plain.shape());
  }
  for (int j = 0; j < 3; ++j) check_close(results[1][j], results[0][j]);
}

TEST_CASE_FIXTURE(fixture, "updates on a device: in place, through a temporary, swaps and ping-pong, as on the host") {
  const auto gv = ramp({4, 4}, 0.1, 0.05);
  for (int k = 0; k < 2; ++k) {
    CAPTURE(spaces[k].str());
    fusor::matrix<double> g{"g"};
    auto W = fusor::shared(ramp({4, 4}), {.name = "W", .space = spaces[k]});
    auto T = fusor::shared(ramp({4, 4}, 2.0), {.name = "T", .space = spaces[k]});
    auto A = fusor::shared(ramp({3}, 1.0), {.name = "A", .space = spaces[k]});
    auto B = fusor::shared(ramp({3}, 5.0), {.name = "B", .space = spaces[k]});
    auto f = device_test::function(fusor::inputs(g), fusor::updates(fusor::update(W, W - 0.1 * g),
                                                               fusor::update(T, fusor::transpose(T) + 1.0),
                                                               fusor::update(A, B), fusor::update(B, A)));
    const auto* w_before = W.get_value(fusor::borrow, fusor::internal_type).data();
    f(gv);
    CHECK(f.update_was_in_place(0));       // every read at the index written
    CHECK(!f.update_was_in_place(1));      // a transposed read: through the spare buffer
    CHECK(f.update_was_transfer(2));       // {A: B, B: A}: buffers swapped, no data moved
    CHECK(W.get_value(fusor::borrow, fusor::internal_type).data() == w_before);
    check_close(W.get_value(), ramp({4, 4}) - 0.1 * gv);
    check_close(T.get_value(), xt::transpose(ramp({4, 4}, 2.0)) + 1.0);
    check_close(A.get_value(), ramp({3}, 5.0));
    check_close(B.get_value(), ramp({3}, 1.0));
    // Ping-pong: the second call writes T into the buffer T held before.
    const auto* t_first = T.get_value(fusor::borrow, fusor::internal_type).data();
    f(gv);
    f(gv);
    CHECK(T.get_value(fusor::borrow, fusor::internal_type).data() == t_first);
    check_close(W.get_value(), ramp({4, 4}) - 0.3 * gv, 1e-10);
  }
}

TEST_CASE_FIXTURE(fixture, "a view you hold keeps a device update out of its buffer") {
  auto W = fusor::shared(ramp({5}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::updates(fusor::update(W, W * 2.0)));
  const auto held = W.get_value(fusor::borrow, fusor::internal_type);
  f();
  CHECK(!f.update_was_in_place(0));
  check_close(xt::adapt(host_values(held), {5}), ramp({5}));
  check_close(W.get_value(), 2.0 * ramp({5}));
}

TEST_CASE_FIXTURE(fixture, "host arguments are copied in (and converted); device arrays are read where they are") {
  fusor::vector<double> x{"x"};
  auto W = fusor::shared(ramp({4}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(x), fusor::outputs(fusor::Out(W * x, fusor::internal_type)));
  // An int32 argument for a float64 input: converted on the way in.
  const fusor::array<double> a = f(xt::xarray<std::int32_t>{1, 2, 3, 4});
  CHECK(a.space() == dev);
  check_close(xt::adapt(host_values(a), {4}), ramp({4}) * xt::xarray<double>{1, 2, 3, 4});
  CHECK(f.plan().find("copy input 'x' to cuda:0 as float64") != std::string::npos);
  // The internal type goes back in: a device array argument is not copied.
  const fusor::array<double> b = f(a);
  check_close(xt::adapt(host_values(b), {4}), ramp({4}) * ramp({4}) * xt::xarray<double>{1, 2, 3, 4});
  CHECK(f.plan().find("copy input") == std::string::npos);
  // A device array of another dtype is refused: converting it needs the host.
  auto I = fusor::shared(xt::xarray<std::int32_t>{1, 2, 3, 4}, {.name = "I", .space = dev});
  CHECK_THROWS_AS(f(I.get_value(fusor::borrow, fusor::internal_type)), fusor::dtype_error);
}

TEST_CASE_FIXTURE(fixture, "one function, one space: mixed spaces are refused, naming the variables") {
  auto a = fusor::shared(ramp({3}), {.name = "on_host"});
  auto b = fusor::shared(ramp({3}), {.name = "on_device", .space = dev});
  try {
    auto f = device_test::function(fusor::inputs(), fusor::outputs(a + b));
    FAIL("expected space_error");
  } catch (const fusor::space_error& e) {
    const std::string m = e.what();
    CHECK(m.find("'on_host' on host") != std::string::npos);
    CHECK(m.find("'on_device' on cuda:0") != std::string::npos);
  }
  // A device array given to a host function is refused too.
  fusor::vector<double> x{"x"};
  auto h = device_test::function(fusor::inputs(x), fusor::outputs(a + x));
  CHECK_THROWS_AS(h(b.get_value(fusor::borrow, fusor::internal_type)), fusor::space_error);
}

TEST_CASE_FIXTURE(fixture, "a steady-state call on a device allocates no device memory") {
  fusor::matrix<double> x{"x"};
  auto W = fusor::shared(ramp({8, 8}), {.name = "W", .space = dev});
  auto b = fusor::shared(ramp({8}), {.name = "b", .space = dev});
  auto h = fusor::sigmoid(fusor::dot(x, W) + b);
  auto f = device_test::function(fusor::inputs(x), fusor::outputs(fusor::Out(fusor::sum(h), fusor::borrow)),
                           fusor::updates(fusor::update(W, W - 0.01 * fusor::dot(fusor::transpose(x), h)),
                                          fusor::update(b, b - 0.01 * fusor::mean(h, 0))));
  const auto xv = ramp({8, 8}, -0.3, 0.02);
  (void)f(xv).value();
  (void)f(xv).value();
  const auto before = memory();
  for (int i = 0; i < 50; ++i) (void)f(xv).value();
  CHECK(memory().allocations == before.allocations);
  CHECK(memory().used == before.used);
  CHECK(f.memory().space == dev);
  CHECK(f.memory().arena_allocations == 1);
}

TEST_CASE_FIXTURE(fixture, "borrowed outputs on a device: a host copy the function reuses, stale after the next call") {
  fusor::vector<double> x{"x"};
  auto W = fusor::shared(ramp({3}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(x), fusor::outputs(fusor::Out(W + x, fusor::borrow)));
  auto first = f(xt::xarray<double>{1, 1, 1});
  check_close(first.xt(), ramp({3}) + 1.0);
  const double* p = first.data();
  auto second = f(xt::xarray<double>{2, 2, 2});
  CHECK(first.stale());
  CHECK(second.data() == p);  // the same host copy, rewritten
  check_close(second.xt(), ramp({3}) + 2.0);
  // Both flags: the device buffer itself, reused.
  auto g = device_test::function(fusor::inputs(x), fusor::outputs(fusor::Out(W + x, fusor::borrow, fusor::internal_type)));
  const fusor::array<double> d1 = g(xt::xarray<double>{1, 1, 1});
  const fusor::array<double> d2 = g(xt::xarray<double>{1, 1, 1});
  CHECK(d1.space() == dev);
  CHECK(d1.data() == d2.data());
}

TEST_CASE_FIXTURE(fixture, "eval and assign on a device, through the same planner") {
  auto W = fusor::shared(ramp({2, 3}), {.name = "W", .space = dev});
  fusor::matrix<double> x{"x"};
  const auto xv = ramp({2, 3}, 1.0);
  xt::xarray<double> e = fusor::eval(device_test::kernels(W * x + 1.0), x = xv);
  check_close(e, ramp({2, 3}) * xv + 1.0);
  const auto* p = W.get_value(fusor::borrow, fusor::internal_type).data();
  fusor::assign(W, device_test::kernels(W * 2.0));  // in place on the device
  CHECK(W.get_value(fusor::borrow, fusor::internal_type).data() == p);
  check_close(W.get_value(), 2.0 * ramp({2, 3}));
  fusor::assign(W, device_test::kernels(fusor::transpose(fusor::transpose(W)) - x), x = xv);
  check_close(W.get_value(), 2.0 * ramp({2, 3}) - xv);
  // An expression of another dtype goes through the variable's casting rules.
  auto I = fusor::shared(xt::xarray<std::int64_t>{1, 2}, {.name = "I", .space = dev});
  fusor::assign(I, device_test::kernels(fusor::cast<std::int32_t>(I) * 3));
  CHECK(I.get_value() == xt::xarray<std::int64_t>{3, 6});
}

TEST_CASE_FIXTURE(fixture, "the plan says where it runs") {
  fusor::vector<float> x{"x"};
  auto W = fusor::shared(xt::xarray<float>{1, 2, 3}, {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(x), fusor::updates(fusor::update(W, W + x)));
  f(xt::xarray<float>{1, 1, 1});
  const std::string p = f.plan();
  CHECK(p.find("plan on cuda:0 for x (3,)") != std::string::npos);
  CHECK(p.find("upload") != std::string::npos);
  CHECK(p.find("(in place)") != std::string::npos);
  // The picture too: the argument on the host, the copy and the rest on the device.
  const std::string dot = f.plan_dot();
  INFO(dot);
  const auto host = dot.find("subgraph cluster_host {"), device = dot.find("subgraph cluster_device {");
  REQUIRE(host != std::string::npos);
  REQUIRE(device != std::string::npos);
  const auto x_node = dot.find("label=\"in:x\\nfloat32 (3,)\"");
  CHECK((host < x_node && x_node < device));
  CHECK(dot.find("label=\"var:W\\nfloat32 (3,)\\nupdated in place\"") > device);
  CHECK(dot.find("[shape=cds, style=\"filled\", fillcolor=\"#d0e0e3\", label=\"0 upload") > device);
  CHECK(dot.find(" -> k0 [label=\"") != std::string::npos);  // the bytes copied
}

TEST_CASE_FIXTURE(fixture, "out of device memory while planning: an error, and nothing changed; a retry works") {
  if (!emulated()) return;
  fusor::emulated_devices small{fusor::emulation_options{.devices = 1, .capacity = 4 * 1024}};
  auto W = fusor::shared(ramp({256}), {.name = "W", .space = dev});  // 2 KiB
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::Out(W * 2.0, fusor::borrow)),
                           fusor::updates(fusor::update(W, fusor::exp(W) + fusor::sum(W))));
  const auto* p = W.get_value(fusor::borrow, fusor::internal_type).data();
  // The arena and the output buffer do not both fit beside W.
  CHECK_THROWS_AS(f(), fusor::device_memory_error);
  CHECK(W.get_value(fusor::borrow, fusor::internal_type).data() == p);
  check_close(W.get_value(), ramp({256}));
  fusor::emulated_devices roomy;
  auto r = f();
  check_close(r.xt(), 2.0 * ramp({256}));
}

TEST_CASE_FIXTURE(fixture, "a logistic-regression training step: the device follows the host step for step") {
  const auto xv = ramp({20, 6}, -1.0, 0.17);
  xt::xarray<double> yv = xt::zeros<double>({20});
  for (std::size_t i = 0; i < 20; ++i) yv(i) = (i % 3 == 0) ? 1.0 : 0.0;
  xt::xarray<double> costs[2];
  xt::xarray<double> weights[2];
  for (int k = 0; k < 2; ++k) {
    fusor::matrix<double> x{"x"};
    fusor::vector<double> y{"y"};
    auto w = fusor::shared(xt::xarray<double>(xt::zeros<double>({6})), {.name = "w", .space = spaces[k]});
    auto b = fusor::shared(0.0, {.name = "b", .space = spaces[k]});
    auto p = fusor::sigmoid(fusor::dot(x, w) + b);
    auto cost = fusor::mean(-y * fusor::log(p) - (1.0 - y) * fusor::log(1.0 - p)) + 0.01 * fusor::sum(w * w);
    auto gw = fusor::dot(fusor::transpose(x), p - y) / 20.0 + 0.02 * w;
    auto gb = fusor::mean(p - y);
    auto train = device_test::function(fusor::inputs(x, y), fusor::outputs(cost),
                                 fusor::updates(fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)));
    costs[k] = xt::zeros<double>({30});
    for (int step = 0; step < 30; ++step) costs[k](step) = train(xv, yv)();
    weights[k] = w.get_value();
  }
  check_close(costs[1], costs[0], 1e-10);
  check_close(weights[1], weights[0], 1e-10);
  CHECK(costs[1](29) < costs[1](0));
}

TEST_CASE_FIXTURE(fixture, "profiling a function on a device times each step to its end") {
  auto W = fusor::shared(ramp({64, 64}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::sum(fusor::exp(W))),
                                 fusor::updates(fusor::update(W, W * 0.5)));
  f.enable_profiling();
  for (int i = 0; i < 3; ++i) (void)f();
  const auto& rows = f.profile().kernels();
  REQUIRE(rows.size() >= 2);
  for (const auto& r : rows) {
    CHECK(r.calls == 3);
    CHECK(r.seconds >= 0);
  }
  CHECK(f.profile().str().find("sum(exp(W))") != std::string::npos);
  // The trace: one event per kernel step of each call, each timed to its end.
  std::size_t kernel_steps = 0;
  for (const auto& s : f.last_plan().steps) kernel_steps += s.runs_kernel();
  const auto events = f.profile().events();
  CHECK(events.size() == 3 * kernel_steps);
  for (const auto& e : events) CHECK(e.seconds >= 0);
}

TEST_CASE_FIXTURE(fixture, "givens and copy(swap) on a device") {
  const auto data_v = ramp({6, 3}, 0.1, 0.3);
  for (int k = 0; k < 2; ++k) {
    CAPTURE(spaces[k].str());
    fusor::matrix<double> x{"x"};
    auto data = fusor::shared(data_v, {.name = "data", .space = spaces[k]});
    auto w1 = fusor::shared(ramp({3}, 1.0), {.name = "w1", .space = spaces[k]});
    auto w2 = fusor::shared(ramp({3}, -1.0), {.name = "w2", .space = spaces[k]});
    auto predict = device_test::function(fusor::inputs(), fusor::outputs(fusor::dot(x, w1)),
                                         fusor::givens(fusor::given(x, data)));
    auto other = predict.copy(fusor::swap(w1, w2));
    auto mv = [&](const xt::xarray<double>& w) {
      xt::xarray<double> r = xt::zeros<double>({6});
      for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j < 3; ++j) r(i) += data_v(i, j) * w(j);
      return r;
    };
    check_close(predict(), mv(ramp({3}, 1.0)), 1e-12);
    check_close(other(), mv(ramp({3}, -1.0)), 1e-12);
  }
}

TEST_CASE_FIXTURE(fixture, "several outputs of one shape are one pass on a device too") {
  auto W = fusor::shared(ramp({4, 5}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::exp(W), W * 2.0, fusor::Out(W - 1.0, fusor::borrow)));
  auto [a, b, c] = f();
  CHECK(f.plan().find("fused outputs 0 1 2") != std::string::npos);
  check_close(a, xt::exp(ramp({4, 5})));
  check_close(b, 2.0 * ramp({4, 5}));
  check_close(c.xt(), ramp({4, 5}) - 1.0);
}

TEST_CASE_FIXTURE(fixture, "graphs: a steady call captured once and replayed; results as without") {
  auto make = [&](const char* tag) {
    auto W = fusor::shared(ramp({8, 8}), {.name = std::string("W") + tag, .space = dev});
    auto V = fusor::shared(ramp({8, 8}, 1.0), {.name = std::string("V") + tag, .space = dev});
    return std::make_pair(W, V);
  };
  auto [W1, V1] = make("1");
  auto [W2, V2] = make("2");
  auto build = [&](auto& W, auto& V) {
    return device_test::function(
        fusor::inputs(), fusor::outputs(fusor::Out(fusor::sum(W * V), fusor::borrow, fusor::internal_type)),
        fusor::updates(fusor::update(W, fusor::transpose(W) * 0.5 + fusor::dot(V, W) * 0.01),
                       fusor::update(V, V - 0.1 * fusor::tanh(W))));
  };
  auto plain = build(W1, V1);
  auto graphed = build(W2, V2);
  graphed.enable_graphs();
  for (int i = 0; i < 9; ++i) {
    const fusor::array<double> a = plain();
    const fusor::array<double> b = graphed();
    CHECK(host_values(b)[0] == doctest::Approx(host_values(a)[0]).epsilon(1e-12));
  }
  check_close(W2.get_value(), W1.get_value(), 1e-12);
  check_close(V2.get_value(), V1.get_value(), 1e-12);
  // The transposed update goes through a spare buffer: the buffers alternate
  // between two sets, so two graphs; every later call replays one.
  CHECK(graphed.graphs_captured() == 2);
  CHECK(graphed.graph_replays() == 6);
  if (emulated()) CHECK(fusor::emulated_runtime::instance().graph_counts(0).second >= 8);
  // set_value into the same allocation keeps the buffers: still a replay.
  W2.set_value(W1.get_value());
  (void)graphed();
  CHECK(graphed.graph_replays() == 7);
  // A call with other buffers (a handle held, so set_value takes a new one)
  // captures again.
  const auto held = W2.get_value(fusor::borrow, fusor::internal_type);
  W2.set_value(W1.get_value());
  (void)graphed();
  CHECK(graphed.graphs_captured() == 3);
  graphed.enable_graphs(false);
  (void)graphed();
  CHECK(graphed.graphs_captured() == 3);
  CHECK(graphed.graph_replays() == 7);
}

TEST_CASE_FIXTURE(fixture, "graphs: borrowed outputs go stale at a replay; plans with host copies run as usual") {
  auto W = fusor::shared(ramp({6}), {.name = "W", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::Out(W * 2.0, fusor::borrow)),
                                 fusor::updates(fusor::update(W, W + 1.0)));
  f.enable_graphs();
  (void)f();
  (void)f();
  auto third = f();  // a replay
  CHECK(f.graph_replays() == 1);
  check_close(third.xt(), 2.0 * (ramp({6}) + 2.0));
  auto fourth = f();
  CHECK(third.stale());
  check_close(fourth.xt(), 2.0 * (ramp({6}) + 3.0));
  // Host arguments are copied in by the plan's steps: no graph.
  fusor::vector<double> x{"x"};
  auto g = device_test::function(fusor::inputs(x), fusor::updates(fusor::update(W, W + x)));
  g.enable_graphs();
  for (int i = 0; i < 3; ++i) g(xt::xarray<double>{1, 1, 1, 1, 1, 1});
  CHECK(g.graphs_captured() == 0);
  check_close(W.get_value(), ramp({6}) + 7.0);
}
