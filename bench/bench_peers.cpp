// bench/bench_peers.cpp — fusor's half of the side-by-side training steps
// (bench/peers/): the perceptron and the logistic regression of
// bench_grad.cpp, with the gradients by fusor::grad and by hand, driven line by
// line from stdin by bench/peers/peers.py, which times PyTensor and JAX on the
// same data in the same run.
//
//   bench_peers DATA_DIR      DATA_DIR holds the .npy files peers.py writes
//
// Commands (one answer line each; "error ..." when a command fails):
//   reset IMPL       parameters back to the files' values, step counter 0 -> ok
//   steps IMPL N     N steps, each timed alone            -> N times in ns
//   state IMPL       the last step's cost, then per parameter its sum and
//                    the sum of its absolute values      -> %.17g numbers
//   quit
// IMPL: mlp_grad, mlp_hand, lr_grad, lr_hand.
//
// The perceptron picks its minibatch inside the step (take(X, idx, 0) and the
// one-hot labels), as examples/mlp.cpp does: step s reads row s % S of
// mlp_idx.npy. The logistic regression reads its data from shared variables:
// a step has no inputs. Both return the cost computed before the update.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>

namespace {

namespace fs = std::filesystem;

/// One implementation of one step, type-erased so the driver can name it.
struct implementation {
  std::function<void()> reset;                  // parameters and counter back to the start
  std::function<double()> step;                 // one step; its cost
  std::function<std::vector<double>()> sums;    // per parameter: sum, sum of |x|
};

template <class T>
void append_sums(std::vector<double>& out, const fusor::shared<T>& s) {
  double sum = 0.0, abs_sum = 0.0;
  const auto value = s.get_value();
  for (const auto v : value) {
    sum += static_cast<double>(v);
    abs_sum += std::abs(static_cast<double>(v));
  }
  out.push_back(sum);
  out.push_back(abs_sum);
}
void append_sums(std::vector<double>& out, const fusor::shared<double>& s) {
  const double v = s.get_value();
  out.push_back(v);
  out.push_back(std::abs(v));
}

// ---------------------------------------------------------------- the perceptron

using matrix_f = xt::xtensor<float, 2>;
using vector_f = xt::xtensor<float, 1>;
using rows_t = xt::xtensor<std::int64_t, 1>;

struct mlp_state {
  fs::path dir;
  fusor::shared<matrix_f> X;
  fusor::shared<rows_t> labels;
  fusor::shared<matrix_f> W1, W2;
  fusor::shared<vector_f> b1, b2;
  std::vector<rows_t> minibatches;  // row s % S of mlp_idx.npy, contiguous
  std::size_t counter = 0;

  explicit mlp_state(const fs::path& d)
      : dir(d),
        X(fusor::load<matrix_f>(d / "mlp_X.npy", {.name = "X"})),
        labels(fusor::load<rows_t>(d / "mlp_labels.npy", {.name = "labels"})),
        W1(fusor::load<matrix_f>(d / "mlp_W1.npy", {.name = "W1"})),
        W2(fusor::load<matrix_f>(d / "mlp_W2.npy", {.name = "W2"})),
        b1(fusor::load<vector_f>(d / "mlp_b1.npy", {.name = "b1"})),
        b2(fusor::load<vector_f>(d / "mlp_b2.npy", {.name = "b2"})) {
    const xt::xtensor<std::int64_t, 2> idx = fusor::load<xt::xtensor<std::int64_t, 2>>(d / "mlp_idx.npy").get_value();
    for (std::size_t s = 0; s < idx.shape(0); ++s) {
      rows_t r = rows_t::from_shape({idx.shape(1)});
      for (std::size_t j = 0; j < idx.shape(1); ++j) r(j) = idx(s, j);
      minibatches.push_back(std::move(r));
    }
  }
  void reset() {
    fusor::load_into(W1, dir / "mlp_W1.npy");
    fusor::load_into(b1, dir / "mlp_b1.npy");
    fusor::load_into(W2, dir / "mlp_W2.npy");
    fusor::load_into(b2, dir / "mlp_b2.npy");
    counter = 0;
  }
  const rows_t& next() { return minibatches[counter++ % minibatches.size()]; }
  std::vector<double> sums() const {
    std::vector<double> out;
    append_sums(out, W1);
    append_sums(out, b1);
    append_sums(out, W2);
    append_sums(out, b2);
    return out;
  }
};

template <bool ByGrad>
implementation make_mlp(std::shared_ptr<mlp_state> m) {
  constexpr std::size_t B = 64, C = 10;
  constexpr float lr = 0.1f;
  fusor::vector<std::int64_t> idx{"idx"};
  auto x = fusor::take(m->X, idx, 0);
  auto y = fusor::one_hot<float>(fusor::take(m->labels, idx, 0), C);
  auto a1 = fusor::dot(x, m->W1) + m->b1;
  auto h = fusor::maximum(a1, 0.0f);
  auto z = fusor::dot(h, m->W2) + m->b2;
  auto log_p = fusor::log_softmax(z, 1);
  auto cost = -fusor::mean(fusor::sum(y * log_p, 1));
  auto build = [&](auto gW1, auto gb1, auto gW2, auto gb2) {
    return fusor::function(fusor::inputs(idx), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                           fusor::updates(fusor::update(m->W1, m->W1 - lr * gW1), fusor::update(m->b1, m->b1 - lr * gb1),
                                          fusor::update(m->W2, m->W2 - lr * gW2), fusor::update(m->b2, m->b2 - lr * gb2)));
  };
  auto make = [&] {
    if constexpr (ByGrad) {
      auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, m->W1, m->b1, m->W2, m->b2);
      return build(gW1, gb1, gW2, gb2);
    } else {
      auto dz = (fusor::exp(log_p) - y) / float(B);
      auto da1 = fusor::where(a1 > 0.0f, fusor::dot(dz, fusor::transpose(m->W2)), 0.0f);
      return build(fusor::dot(fusor::transpose(x), da1), fusor::sum(da1, 0), fusor::dot(fusor::transpose(h), dz),
                   fusor::sum(dz, 0));
    }
  };
  // A compiled function is neither copied nor moved: built in place.
  using F = decltype(make());
  const std::shared_ptr<F> fn(new F(make()));
  return {[m] { m->reset(); }, [m, fn] { return static_cast<double>((*fn)(m->next()).value()); },
          [m] { return m->sums(); }};
}

// ---------------------------------------------------------------- logistic regression

struct lr_state {
  fs::path dir;
  fusor::shared<xt::xtensor<double, 2>> x;
  fusor::shared<xt::xtensor<double, 1>> y, w;
  fusor::shared<double> b;

  explicit lr_state(const fs::path& d)
      : dir(d),
        x(fusor::load<xt::xtensor<double, 2>>(d / "lr_x.npy", {.name = "x"})),
        y(fusor::load<xt::xtensor<double, 1>>(d / "lr_y.npy", {.name = "y"})),
        w(fusor::load<xt::xtensor<double, 1>>(d / "lr_w.npy", {.name = "w"})),
        b(fusor::load<double>(d / "lr_b.npy", {.name = "b"})) {}
  void reset() {
    fusor::load_into(w, dir / "lr_w.npy");
    fusor::load_into(b, dir / "lr_b.npy");
  }
  std::vector<double> sums() const {
    std::vector<double> out;
    append_sums(out, w);
    append_sums(out, b);
    return out;
  }
};

template <bool ByGrad>
implementation make_lr(std::shared_ptr<lr_state> d) {
  auto& x = d->x;
  auto& y = d->y;
  auto& w = d->w;
  auto& b = d->b;
  auto p = fusor::sigmoid(fusor::dot(x, w) + b);
  auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p)) + 0.01 * fusor::sum(w * w);
  auto build = [&](auto gw, auto gb) {
    return fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)));
  };
  auto make = [&] {
    if constexpr (ByGrad) {
      auto [gw, gb] = fusor::grad(cost, w, b);
      return build(gw, gb);
    } else {
      const double n = static_cast<double>(x.get_value(fusor::borrow).shape()[0]);
      return build(fusor::dot(fusor::transpose(x), p - y) / n + 0.02 * w, fusor::mean(p - y));
    }
  };
  // A compiled function is neither copied nor moved: built in place.
  using F = decltype(make());
  const std::shared_ptr<F> fn(new F(make()));
  return {[d] { d->reset(); }, [fn] { return static_cast<double>((*fn)().value()); }, [d] { return d->sums(); }};
}

// ---------------------------------------------------------------- the driver

struct entry {
  implementation impl;
  double last_cost = std::nan("");
};

std::string run(std::map<std::string, entry>& impls, const std::string& line, bool& quit) {
  std::istringstream in(line);
  std::string command, name;
  in >> command;
  if (command == "quit") {
    quit = true;
    return "ok";
  }
  if (command != "reset" && command != "steps" && command != "state")
    return "error: unknown command '" + command + "' (reset, steps, state, quit)";
  in >> name;
  const auto it = impls.find(name);
  if (it == impls.end()) return "error: unknown implementation '" + name + "' (mlp_grad, mlp_hand, lr_grad, lr_hand)";
  entry& e = it->second;
  if (command == "reset") {
    e.impl.reset();
    e.last_cost = std::nan("");
    return "ok";
  }
  if (command == "steps") {
    long n = 0;
    if (!(in >> n) || n <= 0) return "error: steps needs a positive count";
    std::vector<long long> ns(static_cast<std::size_t>(n));
    for (auto& t : ns) {
      const auto start = std::chrono::steady_clock::now();
      e.last_cost = e.impl.step();
      t = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    }
    std::string out;
    for (const long long t : ns) out += (out.empty() ? "" : " ") + std::to_string(t);
    return out;
  }
  // state: the last cost, then each parameter's sums
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", e.last_cost);
  std::string out = buf;
  for (const double v : e.impl.sums()) {
    std::snprintf(buf, sizeof buf, " %.17g", v);
    out += buf;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR  (then commands on stdin; see bench/bench_peers.cpp)\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  std::map<std::string, entry> impls;
  try {
    // Each implementation has its own variables: one's steps never move another's parameters.
    impls["mlp_grad"] = {make_mlp<true>(std::make_shared<mlp_state>(dir))};
    impls["mlp_hand"] = {make_mlp<false>(std::make_shared<mlp_state>(dir))};
    impls["lr_grad"] = {make_lr<true>(std::make_shared<lr_state>(dir))};
    impls["lr_hand"] = {make_lr<false>(std::make_shared<lr_state>(dir))};
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  std::string line;
  bool quit = false;
  while (!quit && std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::string answer;
    try {
      answer = run(impls, line, quit);
    } catch (const std::exception& e) {
      answer = std::string("error: ") + e.what();
    }
    std::printf("%s\n", answer.c_str());
    std::fflush(stdout);
  }
  return 0;
}
