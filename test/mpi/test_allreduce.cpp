// fusor::allreduce over MPI, run by every process of MPI_COMM_WORLD (2 and 4
// processes in the suite): values of each reduction, the plan's communication
// step, data-parallel training equal to one process's full-batch training and
// bit-identical on every process, gradients through a collective, no
// allocation in steady calls, and calls that fail on some processes: every
// process stops with an error, none waits forever, nothing changes.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>
#include <fusor/mpi.hpp>

#include "../device/device_harness.hpp"
#include "mpi_test.hpp"

using mpi_test::allocations;
using mpi_test::normal_matrix;
using mpi_test::rank;
using mpi_test::same_everywhere;
using mpi_test::size;

TEST_CASE("allreduce: sum, mean, max and min of every process's values") {
  const int r = rank(), p = size();
  fusor::vector<double> x{"x"};
  xt::xtensor<double, 1> xv = {1.0 * (r + 1), -2.0 * (r + 1), 10.0 - r};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::allreduce(x, MPI_COMM_WORLD),
                                                              fusor::allreduce(x, MPI_COMM_WORLD, fusor::reduce_op::mean),
                                                              fusor::allreduce(x, MPI_COMM_WORLD, fusor::reduce_op::max),
                                                              fusor::allreduce(x, MPI_COMM_WORLD, fusor::reduce_op::min)));
  auto [s, m, hi, lo] = f(xv);
  // Each output is reduced straight into its buffer: no copy step after it.
  CHECK(f.plan().find("communicate out0") != std::string::npos);
  int copies = 0;
  for (const auto& st : f.last_plan().steps) copies += st.kind == fusor::step_kind::output;
  CHECK(copies == 0);
  CHECK(f.last_plan().arena_bytes == 0);
  // The plan's picture draws each communication step as a hexagon, writing its output.
  const std::string dot = f.plan_dot();
  std::size_t hexagons = 0, communicating = 0;
  for (auto at = dot.find("[shape=hexagon"); at != std::string::npos; at = dot.find("[shape=hexagon", at + 1)) ++hexagons;
  for (const auto& st : f.last_plan().steps) communicating += st.kind == fusor::step_kind::communicate;
  CHECK(communicating == 4);
  CHECK(hexagons == communicating);
  CHECK(dot.find("label=\"0 communicate") != std::string::npos);
  const double tri = p * (p + 1) / 2.0;  // 1 + 2 + ... + p
  CHECK(s == xt::xtensor<double, 1>{tri, -2 * tri, 10.0 * p - (p - 1) * p / 2.0});
  CHECK(xt::allclose(m, xt::xtensor<double, 1>{tri / p, -2 * tri / p, (10.0 * p - (p - 1) * p / 2.0) / p}));
  CHECK(hi == xt::xtensor<double, 1>{1.0 * p, -2.0, 10.0});
  CHECK(lo == xt::xtensor<double, 1>{1.0, -2.0 * p, 10.0 - (p - 1)});
  // Integers are summed exactly.
  fusor::vector<std::int32_t> k{"k"};
  auto fi = fusor::function(fusor::inputs(k), fusor::outputs(fusor::allreduce(k * 2, MPI_COMM_WORLD)));
  CHECK(fi(xt::xtensor<std::int32_t, 1>{r, 1}) == xt::xtensor<std::int32_t, 1>{(p - 1) * p, 2 * p});
}

TEST_CASE("allreduce inside a larger expression, in an update and in eval; the plan's communication step") {
  const int p = size();
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, "w");
  fusor::vector<double> g{"g"};
  // Fused on both sides: the operand (g * 2) is computed into the arena, the
  // sum over processes into a temporary, and the update reads it.
  auto f = fusor::function(fusor::inputs(g), fusor::outputs(fusor::sum(fusor::allreduce(g * 2.0, MPI_COMM_WORLD))),
                           fusor::updates(fusor::update(w, w - 0.5 * fusor::allreduce(g * 2.0, MPI_COMM_WORLD,
                                                                                      fusor::reduce_op::mean))));
  auto total = f(xt::xtensor<double, 1>{1.0, 1.0, 1.0});
  CHECK(total == doctest::Approx(6.0 * p));
  CHECK(w.get_value() == xt::xtensor<double, 1>{0.0, 1.0, 2.0});
  const std::string plan = f.plan();
  CHECK(plan.find("communicate") != std::string::npos);
  CHECK(plan.find("allreduce(g * 2, sum)") != std::string::npos);
  CHECK(plan.find("allreduce(g * 2, mean)") != std::string::npos);
  // eval
  fusor::vector<double> x{"x"};
  auto e = fusor::eval(fusor::allreduce(x, MPI_COMM_WORLD, fusor::reduce_op::max), x = xt::xtensor<double, 1>{double(rank())});
  CHECK(e == xt::xtensor<double, 1>{double(p - 1)});
}

TEST_CASE("an operand nothing else reads is reduced in place, in the temporary it is computed into") {
  const int p = size();
  fusor::vector<double> g{"g"};
  auto communicate_steps = [](const auto& f) {
    std::vector<fusor::step_info> found;
    for (const auto& st : f.last_plan().steps)
      if (st.kind == fusor::step_kind::communicate) found.push_back(st);
    return found;
  };
  // Read by the collective alone: MPI_IN_PLACE in the operand's temporary.
  auto alone = fusor::function(fusor::inputs(g), fusor::outputs(fusor::sum(fusor::allreduce(g * 2.0, MPI_COMM_WORLD))));
  CHECK(alone(xt::xtensor<double, 1>{1.0, 2.0, 3.0}) == doctest::Approx(12.0 * p));
  auto steps = communicate_steps(alone);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].reads[0] == steps[0].dest);
  CHECK(steps[0].in_place);
  const std::string plan = alone.plan();
  CHECK(plan.find("for 2 temporaries") != std::string::npos);  // g * 2 and the sum (not a third for the reduced value)
  CHECK(plan.find("(in place) = allreduce(t") != std::string::npos);
  // Read by something else too: the result goes into a temporary of its own.
  auto shared_operand = fusor::function(
      fusor::inputs(g), fusor::outputs(fusor::sum(fusor::allreduce(g * 2.0, MPI_COMM_WORLD)), fusor::sum(g * 2.0)));
  auto [total, local] = shared_operand(xt::xtensor<double, 1>{1.0, 2.0, 3.0});
  CHECK(total == doctest::Approx(12.0 * p));
  CHECK(local == doctest::Approx(12.0));
  steps = communicate_steps(shared_operand);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].reads[0] != steps[0].dest);
}

TEST_CASE("small allreduces of one kind go as one message; another kind, or a large one, alone") {
  const int p = size(), r = rank();
  fusor::vector<double> a{"a"}, b{"b"}, c{"c"};
  auto mean = [](auto e) { return fusor::allreduce(e, MPI_COMM_WORLD, fusor::reduce_op::mean); };
  auto f = fusor::function(fusor::inputs(a, b, c),
                           fusor::outputs(mean(a * 2.0), mean(b * 3.0),
                                          fusor::allreduce(a * 1.0, MPI_COMM_WORLD, fusor::reduce_op::max),
                                          mean(c * 1.0)));
  const xt::xtensor<double, 1> av{1.0 * r, 2.0}, bv{1.0, 2.0 * r, 3.0};
  const xt::xtensor<double, 1> cv = xt::ones<double>({std::size_t{10000}}) * r;  // 80 kB: alone
  auto [ma, mb, xa, mc] = f(av, bv, cv);
  const double mean_r = (p - 1) / 2.0;
  CHECK(xt::allclose(ma, xt::xtensor<double, 1>{2.0 * mean_r, 4.0}));
  CHECK(xt::allclose(mb, xt::xtensor<double, 1>{3.0, 6.0 * mean_r, 9.0}));
  CHECK(xa == xt::xtensor<double, 1>{double(p - 1), 2.0});
  CHECK(xt::allclose(mc, xt::xtensor<double, 1>(xt::ones<double>({std::size_t{10000}}) * mean_r)));
  std::vector<int> messages;
  for (const auto& st : f.last_plan().steps)
    if (st.kind == fusor::step_kind::communicate) messages.push_back(st.message_steps);
  CHECK(messages == std::vector<int>{2, 0, 1, 1});
  CHECK(f.plan().find("(one message with the next 1)") != std::string::npos);
  // A fused message allocates nothing in steady calls either.
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  auto v = fusor::shared(xt::xtensor<double, 1>{3.0, 4.0, 5.0}, "v");
  auto g = fusor::function(fusor::inputs(fusor::In(a, fusor::borrow), fusor::In(b, fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 0.1 * mean(a * w)), fusor::update(v, v - 0.1 * mean(b * v))));
  for (int i = 0; i < 3; ++i) g(av, bv);
  CHECK(g.plan().find("(one message with the next 1)") != std::string::npos);
  const std::size_t before = allocations.load();
  for (int i = 0; i < 50; ++i) g(av, bv);
  CHECK(allocations.load() - before == 0);
  CHECK(same_everywhere(w.get_value().data(), 2 * sizeof(double)));
  CHECK(same_everywhere(v.get_value().data(), 3 * sizeof(double)));
}

TEST_CASE("refusals when the expression is built: a mean of integers, booleans, and max's gradient") {
  fusor::vector<std::int64_t> k{"k"};
  CHECK_THROWS_AS((void)fusor::allreduce(k, MPI_COMM_WORLD, fusor::reduce_op::mean), fusor::dtype_error);
  fusor::vector<double> x{"x"};
  CHECK_THROWS_AS((void)fusor::allreduce(x > 0.0, MPI_COMM_WORLD), fusor::dtype_error);
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  CHECK_THROWS_AS((void)fusor::grad(fusor::sum(fusor::allreduce(w * x, MPI_COMM_WORLD, fusor::reduce_op::max)), w),
                  fusor::value_error);
}

TEST_CASE("the gradient through a sum over processes is the sum of the processes' adjoints") {
  // Each process's cost reads y = sum over processes of w * x_p; the total
  // cost is the processes' costs summed, P * sum(y), whose gradient for
  // this process's w is P * x_p.
  const int r = rank(), p = size();
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  fusor::vector<double> x{"x"};
  auto gw = fusor::grad(fusor::sum(fusor::allreduce(w * x, MPI_COMM_WORLD)), w);
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(gw));
  CHECK(f(xt::xtensor<double, 1>{1.0 + r, -1.0}) == xt::xtensor<double, 1>{p * (1.0 + r), -1.0 * p});
}

namespace {
/// Logistic regression trained for `steps` steps by `grad`, on process
/// `part` of `parts` shares of the batch (parts 1: the whole batch); returns
/// w then b.
std::vector<double> train_logistic(const xt::xtensor<double, 2>& data, const xt::xtensor<double, 1>& labels, int part,
                                   int parts, int steps) {
  const std::size_t n = data.shape()[0] / static_cast<std::size_t>(parts), feats = data.shape()[1];
  const xt::xtensor<double, 2> xs = xt::view(data, xt::range(n * part, n * (part + 1)), xt::all());
  const xt::xtensor<double, 1> ys = xt::view(labels, xt::range(n * part, n * (part + 1)));
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto w = fusor::shared(xt::xtensor<double, 1>(xt::zeros<double>({feats})), "w");
  auto b = fusor::shared(0.0, "b");
  auto p1 = fusor::sigmoid(fusor::dot(x, w) + b);
  auto cost = fusor::mean(-y * fusor::log(p1) - (1 - y) * fusor::log(1 - p1)) + 0.01 * fusor::sum(w * w);
  auto [gw, gb] = fusor::grad(cost, w, b);
  std::vector<double> out;
  auto collect = [&] {
    for (double v : w.get_value()) out.push_back(v);
    out.push_back(b.get_value());
  };
  // One process alone: the same step, its collectives over MPI_COMM_SELF (one
  // function type for both, so the unit compiles one training step).
  using fusor::reduce_op;
  const MPI_Comm comm = parts == 1 ? MPI_COMM_SELF : MPI_COMM_WORLD;
  auto step = fusor::function(
      fusor::inputs(x, y), fusor::updates(fusor::update(w, w - 0.5 * fusor::allreduce(gw, comm, reduce_op::mean)),
                                          fusor::update(b, b - 0.5 * fusor::allreduce(gb, comm, reduce_op::mean))));
  for (int i = 0; i < steps; ++i) step(xs, ys);
  collect();
  return out;
}
}  // namespace

TEST_CASE("data-parallel logistic regression: P processes with B/P samples each equal one process with B") {
  const int r = rank(), p = size();
  const std::size_t batch = 48, feats = 6;
  const auto data = normal_matrix(batch, feats, 7);
  xt::xtensor<double, 1> labels = xt::view(data, xt::all(), 0) + 0.5 * xt::view(data, xt::all(), 1) > 0.0;
  const auto parallel = train_logistic(data, labels, r, p, 50);
  const auto alone = train_logistic(data, labels, 0, 1, 50);
  REQUIRE(parallel.size() == alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i) CHECK(parallel[i] == doctest::Approx(alone[i]).epsilon(1e-12));
  CHECK(std::abs(alone[0]) > 0.1);  // it learned something
  // Every process holds the same parameters, to the bit.
  CHECK(same_everywhere(parallel.data(), parallel.size() * sizeof(double)));
}

TEST_CASE("data-parallel perceptron by grad: equal to one process, bit-identical replicas") {
  const int r = rank(), p = size();
  const std::size_t batch = 32, feats = 5, hidden = 7;
  const auto data = normal_matrix(batch, feats, 11);
  const xt::xtensor<double, 1> labels = xt::sum(data, {1}) > 0.0;
  const auto W1_0 = normal_matrix(feats, hidden, 3) * 0.5;
  const auto W2_0 = xt::xtensor<double, 1>(xt::view(normal_matrix(1, hidden, 5), 0, xt::all()) * 0.5);
  auto train = [&](int part, int parts) {
    const std::size_t n = batch / static_cast<std::size_t>(parts);
    const xt::xtensor<double, 2> xs = xt::view(data, xt::range(n * part, n * (part + 1)), xt::all());
    const xt::xtensor<double, 1> ys = xt::view(labels, xt::range(n * part, n * (part + 1)));
    fusor::matrix<double> x{"x"};
    fusor::vector<double> y{"y"};
    auto W1 = fusor::shared(xt::xtensor<double, 2>(W1_0), "W1");
    auto b1 = fusor::shared(xt::xtensor<double, 1>(xt::zeros<double>({hidden})), "b1");
    auto W2 = fusor::shared(xt::xtensor<double, 1>(W2_0), "W2");
    auto b2 = fusor::shared(0.0, "b2");
    auto h = fusor::tanh(fusor::dot(x, W1) + b1);
    auto q = fusor::sigmoid(fusor::dot(h, W2) + b2);
    auto cost = fusor::mean(-y * fusor::log(q) - (1 - y) * fusor::log(1 - q));
    auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);
    auto mean = [&](const auto& g) {
      return fusor::allreduce(g, parts == 1 ? MPI_COMM_SELF : MPI_COMM_WORLD, fusor::reduce_op::mean);
    };
    auto step = fusor::function(fusor::inputs(x, y),
                                fusor::updates(fusor::update(W1, W1 - 0.3 * mean(gW1)), fusor::update(b1, b1 - 0.3 * mean(gb1)),
                                               fusor::update(W2, W2 - 0.3 * mean(gW2)), fusor::update(b2, b2 - 0.3 * mean(gb2))));
    for (int i = 0; i < 40; ++i) step(xs, ys);
    std::vector<double> out;
    for (double v : W1.get_value()) out.push_back(v);
    for (double v : b1.get_value()) out.push_back(v);
    for (double v : W2.get_value()) out.push_back(v);
    out.push_back(b2.get_value());
    return out;
  };
  const auto parallel = train(r, p);
  const auto alone = train(0, 1);  // MPI_COMM_SELF: a collective over this process alone
  for (std::size_t i = 0; i < alone.size(); ++i) CHECK(parallel[i] == doctest::Approx(alone[i]).epsilon(1e-11));
  CHECK(same_everywhere(parallel.data(), parallel.size() * sizeof(double)));
}

TEST_CASE("a steady call with collectives allocates nothing") {
  auto w = fusor::shared(xt::xtensor<double, 1>(xt::ones<double>({256})), "w");
  fusor::vector<double> g{"g"};
  auto f = fusor::function(fusor::inputs(fusor::In(g, fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 1e-3 * fusor::allreduce(g * w, MPI_COMM_WORLD,
                                                                                       fusor::reduce_op::mean))));
  xt::xtensor<double, 1> gv = xt::ones<double>({256});
  for (int i = 0; i < 3; ++i) f(gv);
  const std::size_t before = allocations.load();
  for (int i = 0; i < 100; ++i) f(gv);
  CHECK(allocations.load() - before == 0);
  CHECK(same_everywhere(w.get_value().data(), 256 * sizeof(double)));
}

TEST_CASE("processes that disagree on the shapes all stop with an error naming them; nothing changes") {
  const int r = rank();
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, "w");
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::allreduce(x, MPI_COMM_WORLD)),
                           fusor::updates(fusor::update(w, w * 2.0)));
  // Process 0 sends 2 rows, the others 3.
  const xt::xtensor<double, 2> xv = xt::ones<double>({r == 0 ? std::size_t{2} : std::size_t{3}, std::size_t{3}});
  std::string message;
  try {
    (void)f(xv);
  } catch (const fusor::shape_error& e) {
    message = e.what();
  }
  CHECK(message.find("disagree") != std::string::npos);
  CHECK(message.find("process 0") != std::string::npos);
  CHECK(message.find("(2, 3)") != std::string::npos);
  CHECK(message.find("(3, 3)") != std::string::npos);
  CHECK(w.get_value() == xt::xtensor<double, 1>{1.0, 2.0, 3.0});
  // Agreeing again, every process goes on.
  auto ok = f(xt::xtensor<double, 2>(xt::ones<double>({2, 3})));
  CHECK(ok(0, 0) == doctest::Approx(size()));
  CHECK(w.get_value() == xt::xtensor<double, 1>{2.0, 4.0, 6.0});
}

TEST_CASE("a call that fails on one process before its collectives stops every process, none waits") {
  const int r = rank(), p = size();
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, "w");
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::updates(fusor::update(w, w - fusor::allreduce(fusor::dot(x, w), MPI_COMM_WORLD))));
  // The last process passes 4 columns where w has 3: its plan is refused
  // (a shape error) before any collective; the others learn it at the agreement.
  const xt::xtensor<double, 2> xv = xt::ones<double>({std::size_t{3}, r == p - 1 ? std::size_t{4} : std::size_t{3}});
  std::string message;
  bool shape = false;
  try {
    f(xv);
  } catch (const fusor::shape_error& e) {
    shape = true;
    message = e.what();
  } catch (const fusor::error& e) {
    message = e.what();
  }
  if (r == p - 1) {
    CHECK(shape);  // its own error
  } else {
    CHECK(message.find("process " + std::to_string(p - 1)) != std::string::npos);
    CHECK(message.find("failed this call") != std::string::npos);
  }
  CHECK(w.get_value() == xt::xtensor<double, 1>{1.0, 2.0, 3.0});
  // And the next call, right everywhere, runs.
  f(xt::xtensor<double, 2>(xt::zeros<double>({3, 3})));
  CHECK(w.get_value() == xt::xtensor<double, 1>{1.0, 2.0, 3.0});
}

TEST_CASE("a call that fails on one process after its collectives stops every process before anything is committed") {
  const int r = rank(), p = size();
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, "w");
  fusor::vector<double> x{"x"};
  fusor::vector<std::int64_t> idx{"idx"};
  // The gather reads the collective's result: its index check runs after the
  // collective, so the processes agree once more after the last step.
  auto f = fusor::function(fusor::inputs(x, idx), fusor::outputs(fusor::take(fusor::allreduce(x, MPI_COMM_WORLD), idx)),
                           fusor::updates(fusor::update(w, w + 1.0)));
  const xt::xtensor<std::int64_t, 1> bad = {r == p - 1 ? 7 : 0};
  std::string message;
  bool index = false;
  try {
    (void)f(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, bad);
  } catch (const fusor::index_error& e) {
    index = true;
  } catch (const fusor::error& e) {
    message = e.what();
  }
  if (r == p - 1) {
    CHECK(index);
  } else {
    CHECK(message.find("process " + std::to_string(p - 1) + " of the communicator failed this call") != std::string::npos);
  }
  CHECK(w.get_value() == xt::xtensor<double, 1>{1.0, 2.0, 3.0});  // no process committed the update
  auto ok = f(xt::xtensor<double, 1>{1.0, 2.0, 3.0}, xt::xtensor<std::int64_t, 1>{2});
  CHECK(ok == xt::xtensor<double, 1>{3.0 * p});
  CHECK(w.get_value() == xt::xtensor<double, 1>{2.0, 3.0, 4.0});
}

TEST_CASE_FIXTURE(device_test::fixture, "allreduce of variables on a device (emulated here): the same values as on the host") {
  const int r = rank(), p = size();
  xt::xtensor<double, 1> results[2][2];
  for (int k = 0; k < 2; ++k) {
    auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 3.0, 4.0}, {.name = "w", .space = device_test::spaces[k]});
    fusor::vector<double> g{"g"};
    auto f = device_test::function(
        fusor::inputs(g), fusor::outputs(fusor::allreduce(g * w, MPI_COMM_WORLD)),
        fusor::updates(fusor::update(w, w - 0.5 * fusor::allreduce(g + w, MPI_COMM_WORLD, fusor::reduce_op::mean))));
    CHECK(f.space() == device_test::spaces[k]);
    const xt::xtensor<double, 1> gv = {1.0 + r, -1.0, 0.5, 2.0 * r};
    auto out = f(gv);
    results[k][0] = out;
    results[k][1] = w.get_value();
    CHECK(f.plan().find("communicate") != std::string::npos);
  }
  CHECK(results[0][0] == results[1][0]);
  CHECK(results[0][1] == results[1][1]);
  // w = 1 2 3 4 on every process: sum of g * w over processes, and w - 0.5 * mean(g + w).
  const double rsum = p * (p - 1) / 2.0;
  CHECK(results[0][0] == xt::xtensor<double, 1>{1.0 * p + rsum, -2.0 * p, 1.5 * p, 8.0 * rsum});
  CHECK(xt::allclose(results[0][1], xt::xtensor<double, 1>{1.0 - 0.5 * (1.0 + rsum / p + 1.0), 2.0 - 0.5 * (-1.0 + 2.0),
                                                           3.0 - 0.5 * (0.5 + 3.0), 4.0 - 0.5 * (2.0 * rsum / p + 4.0)}));
}
