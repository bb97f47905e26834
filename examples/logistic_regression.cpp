// The Theano tutorial's logistic regression ("A Real Example: Logistic
// Regression"), in fusor: 400 random samples with 784 features (fixed seed),
// shared w and b, the tutorial's cross-entropy cost with an L2 term, its
// gradients by fusor::grad, 10 000 training steps with updates, then predict.
//
// The same model is trained side by side with the gradients written by hand
// (the reference): both reach the same cost, and the time per step of the
// two is measured in the same run, in alternating blocks.
//
// `logistic_regression FOLDER` also writes train()'s plan as a Graphviz graph
// (FOLDER/logistic_regression_plan.dot: `dot -Tsvg` draws it) and a trace of
// ten more profiled steps (FOLDER/logistic_regression_trace.json, for Perfetto
// or chrome://tracing).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include <fusor/fusor.hpp>

int main(int argc, char** argv) {
  constexpr std::size_t N = 400, feats = 784;
  constexpr int training_steps = 10000, block = 500;
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin;

  // D = (rng.randn(N, feats), rng.randint(size=N, low=0, high=2))
  xt::xtensor<double, 2> data(std::array<std::size_t, 2>{N, feats});
  xt::xtensor<double, 1> labels(std::array<std::size_t, 1>{N});
  for (auto& v : data) v = normal(rng);
  for (auto& v : labels) v = coin(rng) ? 1.0 : 0.0;
  xt::xtensor<double, 1> w0(std::array<std::size_t, 1>{feats});
  for (auto& v : w0) v = normal(rng);

  // Symbolic variables and shared parameters.
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto w = fusor::shared(w0, "w");
  auto b = fusor::shared(0.0, "b");

  // The tutorial's expression graph, as written: with 784 features x.w starts
  // far from 0, the sigmoid saturates to exactly 0 or 1, and log(p) is
  // log(0) — NaN cost in Theano without its stabilization. fusor rewrites
  // log(sigmoid(z)) to -softplus(-z) and log(1 - sigmoid(z)) to -softplus(z)
  // before planning, and differentiates the rewritten cost.
  auto p_1 = fusor::sigmoid(fusor::dot(x, w) + b);                  // probability of target 1
  auto prediction = p_1 > 0.5;                                       // the prediction, thresholded
  auto xent = -y * fusor::log(p_1) - (1 - y) * fusor::log(1 - p_1);  // cross-entropy per sample
  auto cost = fusor::mean(xent) + 0.01 * fusor::sum(w * w);          // the cost to minimise
  auto [gw, gb] = fusor::grad(cost, w, b);                           // its gradients

  auto train = fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                               fusor::updates(fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)));
  auto predict = fusor::function(fusor::inputs(x), fusor::outputs(prediction));

  // The reference: the same model with the gradients written by hand.
  auto wh = fusor::shared(w0, "w_hand");
  auto bh = fusor::shared(0.0, "b_hand");
  auto ph = fusor::sigmoid(fusor::dot(x, wh) + bh);
  auto cost_h = fusor::mean(-y * fusor::log(ph) - (1 - y) * fusor::log(1 - ph)) + 0.01 * fusor::sum(wh * wh);
  auto gw_h = fusor::dot(fusor::transpose(x), ph - y) / double(N) + 0.02 * wh;
  auto gb_h = fusor::mean(ph - y);
  auto train_hand = fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::Out(cost_h, fusor::borrow)),
                                    fusor::updates(fusor::update(wh, wh - 0.1 * gw_h), fusor::update(bh, bh - 0.1 * gb_h)));

  double initial_cost = 0, final_cost = 0, final_hand = 0;
  int nan_steps = 0;
  double t_grad = 0, t_hand = 0;
  using clock = std::chrono::steady_clock;
  for (int done = 0; done < training_steps; done += block) {
    const auto t0 = clock::now();
    for (int i = 0; i < block; ++i) {
      final_cost = train(data, labels).value();
      if (done == 0 && i == 0) initial_cost = final_cost;
      nan_steps += std::isnan(final_cost) ? 1 : 0;
    }
    const auto t1 = clock::now();
    for (int i = 0; i < block; ++i) final_hand = train_hand(data, labels).value();
    const auto t2 = clock::now();
    t_grad += std::chrono::duration<double>(t1 - t0).count();
    t_hand += std::chrono::duration<double>(t2 - t1).count();
  }

  const auto predicted = predict(data);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < N; ++i) correct += (predicted(i) ? 1.0 : 0.0) == labels(i);

  std::printf("logistic regression: %zu samples, %zu features, %d training steps\n", N, feats, training_steps);
  std::printf("initial cost      %.6f\n", initial_cost);
  std::printf("final cost        %.12f (fusor::grad)\n", final_cost);
  std::printf("                  %.12f (gradients by hand), relative difference %.1e\n", final_hand,
              std::abs(final_cost - final_hand) / std::abs(final_hand));
  std::printf("steps with a NaN cost: %d\n", nan_steps);
  std::printf("training accuracy %.1f %% (%zu / %zu)\n", 100.0 * static_cast<double>(correct) / N, correct, N);
  std::printf("time per step     %.1f us with fusor::grad, %.1f us by hand (ratio %.3f; w and b updated in place: %s)\n",
              t_grad * 1e6 / training_steps, t_hand * 1e6 / training_steps, t_grad / t_hand,
              train.update_was_in_place(0) && train.update_was_in_place(1) ? "yes" : "no");
  // What train() runs: its plan (built at the first call, reused by every
  // call with the same shapes).
  std::printf("\nthe plan of train():\n%s", train.plan().c_str());
  const auto mem = train.memory();
  const auto mem_h = train_hand.memory();
  std::printf("train() holds     %zu bytes of arena (by hand: %zu), %zu bytes of output and update buffers\n",
              mem.arena_bytes, mem_h.arena_bytes, mem.output_bytes);
  if (argc > 1) {
    const std::string folder = argv[1];
    train.write_plan_dot(folder + "/logistic_regression_plan.dot");
    train.enable_profiling();
    for (int i = 0; i < 10; ++i) (void)train(data, labels);
    train.profile().write_chrome_trace(folder + "/logistic_regression_trace.json");
    std::printf("wrote %s/logistic_regression_plan.dot and %s/logistic_regression_trace.json\n", folder.c_str(),
                folder.c_str());
  }
  const bool ok = nan_steps == 0 && std::abs(final_cost - final_hand) <= 1e-10 * std::abs(final_hand);
  return ok ? 0 : 1;
}
