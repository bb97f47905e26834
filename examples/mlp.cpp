// A two-layer perceptron (784 -> 128 -> 10, ReLU, softmax cross-entropy)
// trained by minibatch SGD, in fusor, with the gradients by fusor::grad.
//
// The data are synthetic, drawn with fusor's own random stream: ten classes,
// each a Gaussian blob around a random centre in 784 dimensions; 4096 samples
// to train on and 1024 held out. The whole training set lives in two shared
// variables (X and the labels); every step draws 64 row numbers from the
// stream and passes them to train(), which picks its minibatch with
// fusor::take(X, idx, 0) (NumPy's X[idx]), so the program never copies a
// minibatch itself.
//
// The program exits with 1 unless the cost over the training set fell to less
// than a third of its initial value, the training accuracy is at least 90 %
// and the held-out accuracy at least 50 % (guessing gets about 10 %).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include <fusor/fusor.hpp>

namespace {

constexpr std::size_t N = 4096;       // training samples
constexpr std::size_t N_test = 1024;  // held-out samples
constexpr std::size_t D = 784;        // features
constexpr std::size_t H = 128;        // hidden units
constexpr std::size_t C = 10;         // classes
constexpr std::size_t B = 64;         // minibatch
constexpr int steps = 2000;           // about 30 passes over the training set
constexpr int report_every = 250;
constexpr float learning_rate = 0.1f;

}  // namespace

int main() {
  fusor::random_stream rng(42);

  // ---------------------------------------------------------------- the data
  // A sample of class c is centres[c] plus standard-normal noise: for random
  // labels, take(centres, labels, 0) + noise. The centres are close (0.15 per
  // feature against noise 1), so no single feature tells the classes apart.
  // eval computes an expression once into an xtensor; each eval that reads
  // the stream advances it, so every eval below draws new numbers.
  auto centres = fusor::shared(fusor::eval(rng.normal<float>({C, D}, 0.0f, 0.15f)), "centres");
  auto blobs = [&](std::size_t n, const std::string& name) {
    auto label_draw = fusor::cast<std::int64_t>(rng.uniform({n}, 0.0, double(C)));  // uniform on 0..9
    auto labels = fusor::shared(fusor::eval(label_draw), "labels" + name);
    auto x = fusor::eval(fusor::take(centres, labels, 0) + rng.normal<float>({n, D}, 0.0f, 1.0f));
    return std::pair(fusor::shared(std::move(x), "X" + name), labels);
  };
  auto [X, labels] = blobs(N, "");                        // the training set: (N, D) float, (N,) int64
  auto [X_test, labels_test] = blobs(N_test, "_test");  // held out

  // ---------------------------------------------------------------- the model
  // He initialisation for the ReLU layer, zero biases.
  auto W1 = fusor::shared(fusor::eval(rng.normal<float>({D, H}, 0.0f, std::sqrt(2.0f / D))), "W1");
  auto b1 = fusor::shared(fusor::eval(fusor::zeros<float>({H})), "b1");
  auto W2 = fusor::shared(fusor::eval(rng.normal<float>({H, C}, 0.0f, std::sqrt(1.0f / H))), "W2");
  auto b2 = fusor::shared(fusor::eval(fusor::zeros<float>({C})), "b2");

  // ---------------------------------------------------------------- one SGD step
  fusor::vector<std::int64_t> idx{"idx"};                          // the minibatch's row numbers
  auto x = fusor::take(X, idx, 0);                                 // X[idx]: (64, 784)
  auto y = fusor::one_hot<float>(fusor::take(labels, idx, 0), C);  // (64, 10), 1 at each label

  auto a1 = fusor::dot(x, W1) + b1;                    // (64, 128)
  auto h = fusor::maximum(a1, 0.0f);                   // ReLU
  auto z = fusor::dot(h, W2) + b2;                     // (64, 10) logits
  auto log_p = fusor::log_softmax(z, 1);              // stable: z minus its row maximum
  auto cost = -fusor::mean(fusor::sum(y * log_p, 1));  // mean cross-entropy

  // The gradients of the cost with respect to the four parameters: four
  // expressions, built when grad is called (backpropagation by the C++
  // compiler). The forward nodes they read (h, log_p, the minibatch x) are
  // the cost's own: train() computes each once per call.
  auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);

  // train(idx): the minibatch's cost; the four parameters updated (all from
  // the values they had when the call began). x appears in the forward pass
  // and in gW1: it is one node of the graph, gathered once per call.
  auto train = fusor::function(fusor::inputs(idx), fusor::outputs(fusor::Out(cost, fusor::borrow)),
                               fusor::updates(fusor::update(W1, W1 - learning_rate * gW1),
                                              fusor::update(b1, b1 - learning_rate * gb1),
                                              fusor::update(W2, W2 - learning_rate * gW2),
                                              fusor::update(b2, b2 - learning_rate * gb2)));

  // The minibatch: 64 row numbers drawn uniformly from [0, N) (with
  // replacement). One draw, evaluated again at every step: each eval advances
  // the stream, so every step gets new indices. (The draw could as well be
  // the indices inside train itself, take(X, batch, 0) and take(labels,
  // batch, 0) in a function of no inputs: a draw read twice in one call gives
  // the same numbers.)
  auto batch = fusor::cast<std::int64_t>(rng.uniform({B}, 0.0, double(N)));

  // ---------------------------------------------------------------- cost and accuracy over a whole set
  auto z_all = fusor::dot(fusor::maximum(fusor::dot(X, W1) + b1, 0.0f), W2) + b2;
  auto cost_all = -fusor::mean(fusor::sum(fusor::one_hot<float>(labels, C) * fusor::log_softmax(z_all, 1), 1));
  auto accuracy = fusor::mean(fusor::cast<float>(fusor::argmax(z_all, 1) == labels));
  auto evaluate = fusor::function(fusor::inputs(), fusor::outputs(cost_all, accuracy));
  // The same function reading the held-out set instead.
  auto evaluate_test = evaluate.copy(fusor::swap(X, X_test), fusor::swap(labels, labels_test));

  // The accuracy of always guessing the most common class.
  const xt::xtensor<std::int64_t, 1> counts = fusor::eval(fusor::sum(fusor::one_hot<std::int64_t>(labels, C), 0));
  const double guessing = static_cast<double>(*std::max_element(counts.begin(), counts.end())) / N;

  const auto [initial_cost, initial_accuracy] = evaluate();
  std::printf("two-layer perceptron %zu-%zu-%zu, %zu training samples, minibatch %zu, "
              "%d SGD steps, learning rate %.2f\n",
              D, H, C, N, B, steps, double(learning_rate));
  std::printf("before training: cost %.4f, accuracy %.1f %% (guessing the most common class: %.1f %%)\n",
              double(initial_cost), 100.0 * initial_accuracy, 100.0 * guessing);

  double running = 0.0;  // the mean minibatch cost since the last report
  const auto start = std::chrono::steady_clock::now();
  for (int step = 1; step <= steps; ++step) {
    const xt::xtensor<std::int64_t, 1> rows = fusor::eval(batch);
    running += train(rows).value();
    if (step % report_every == 0) {
      std::printf("step %5d  minibatch cost %.4f (mean of the last %d)\n", step, running / report_every, report_every);
      running = 0.0;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto [final_cost, final_accuracy] = evaluate();
  const auto [test_cost, test_accuracy] = evaluate_test();
  std::printf("after training:  cost %.4f, accuracy %.1f %%\n", double(final_cost), 100.0 * final_accuracy);
  std::printf("held-out set:    cost %.4f, accuracy %.1f %% (%zu samples the model never saw)\n", double(test_cost),
              100.0 * test_accuracy, N_test);
  std::printf("time per step    %.1f us (drawing the indices and train())\n", seconds * 1e6 / steps);
  // The gather steps of train()'s plan (the whole plan: train.plan()): X[idx]
  // and labels[idx], each once per call, into temporaries that the dots and
  // the fused loops read.
  std::printf("\nthe gather steps of train():\n");
  const std::string plan = train.plan();
  for (std::size_t at = 0, end; at < plan.size(); at = end + 1) {
    end = plan.find('\n', at);
    if (end == std::string::npos) end = plan.size();
    const std::string line = plan.substr(at, end - at);
    if (line.find(" gather ") != std::string::npos) std::printf("%s\n", line.c_str());
  }

  const bool cost_ok = final_cost < initial_cost / 3.0f;
  const bool accuracy_ok = final_accuracy >= 0.9f && test_accuracy >= 0.5f;
  std::printf("\ncost fell below a third: %s; accuracy >= 90 %% (training) and >= 50 %% (held out): %s\n",
              cost_ok ? "yes" : "NO", accuracy_ok ? "yes" : "NO");
  return cost_ok && accuracy_ok ? 0 : 1;
}
