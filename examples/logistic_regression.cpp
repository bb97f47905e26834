// The Theano tutorial's logistic regression ("A Real Example: Logistic
// Regression"), in fusor: 400 random samples with 784 features (fixed seed),
// shared w and b, the cross-entropy cost with an L2 term, hand-written
// gradients, 10 000 training steps with updates, then predict.
#include <chrono>
#include <cstdio>
#include <random>

#include <fusor/fusor.hpp>

int main() {
  constexpr std::size_t N = 400, feats = 784;
  constexpr int training_steps = 10000;
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin;

  // D = (rng.randn(N, feats), rng.randint(size=N, low=0, high=2))
  xt::xtensor<double, 2> data(std::array<std::size_t, 2>{N, feats});
  xt::xtensor<double, 1> labels(std::array<std::size_t, 1>{N});
  for (auto& v : data) v = normal(rng);
  for (auto& v : labels) v = coin(rng) ? 1.0 : 0.0;

  // Symbolic variables and shared parameters.
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  xt::xtensor<double, 1> w0(std::array<std::size_t, 1>{feats});
  for (auto& v : w0) v = normal(rng);
  auto w = fusor::shared(std::move(w0), "w");
  auto b = fusor::shared(0.0, "b");

  // The expression graph.
  auto p_1 = fusor::sigmoid(fusor::dot(x, w) + b);                            // probability of target 1
  auto prediction = p_1 > 0.5;                                                 // the prediction, thresholded
  // Cross-entropy per sample. With 784 features, x.w starts far from 0 and the
  // sigmoid saturates to exactly 0 or 1 in float64; clipping keeps log finite
  // (as scikit-learn does), so the initial cost is a number, not NaN.
  auto p_safe = fusor::clip(p_1, 1e-15, 1.0 - 1e-15);
  auto xent = -y * fusor::log(p_safe) - (1.0 - y) * fusor::log(1.0 - p_safe);
  auto cost = fusor::mean(xent) + 0.01 * fusor::sum(w * w);                    // the cost to minimise
  auto gw = fusor::dot(fusor::transpose(x), p_1 - y) / double(N) + 0.02 * w;  // d cost / d w, by hand
  auto gb = fusor::mean(p_1 - y);                                              // d cost / d b, by hand

  // Compile: the cost comes back as a borrowed scalar; w and b update in place.
  auto train = fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                               fusor::updates(fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)));
  auto predict = fusor::function(fusor::inputs(x), fusor::outputs(prediction));

  const double initial_cost = train(data, labels).value();
  const auto start = std::chrono::steady_clock::now();
  double final_cost = initial_cost;
  for (int i = 1; i < training_steps; ++i) final_cost = train(data, labels).value();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto predicted = predict(data);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < N; ++i) correct += (predicted(i) ? 1.0 : 0.0) == labels(i);

  std::printf("logistic regression: %zu samples, %zu features, %d training steps\n", N, feats, training_steps);
  std::printf("initial cost      %.6f\n", initial_cost);
  std::printf("final cost        %.6f\n", final_cost);
  std::printf("training accuracy %.1f %% (%zu / %zu)\n", 100.0 * static_cast<double>(correct) / N, correct, N);
  std::printf("time per step     %.1f us (w and b updated in place: %s)\n", seconds * 1e6 / (training_steps - 1),
              train.update_was_in_place(0) && train.update_was_in_place(1) ? "yes" : "no");
  // What train() runs: its plan (built at the first call, reused by every
  // call with the same shapes).
  std::printf("\nthe plan of train():\n%s", train.plan().c_str());
  // What the fused kernels of train() cost: 100 more steps, profiled.
  train.enable_profiling();
  for (int i = 0; i < 100; ++i) (void)train(data, labels);
  std::printf("\nprofile of 100 profiled steps of train():\n%s", train.profile().str().c_str());
  const auto mem = train.memory();
  std::printf("train() holds     %zu bytes of arena, %zu bytes of output and update buffers\n", mem.arena_bytes,
              mem.output_bytes);
  return 0;
}
