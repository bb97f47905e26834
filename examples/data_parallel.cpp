// Data-parallel training of a perceptron over MPI: every process holds the
// same parameters, computes the gradients of its share of each minibatch with
// fusor::grad, and the step averages them over the processes before the
// update, all in one compiled function:
//
//   update(W, W - lr * allreduce(gW, MPI_COMM_WORLD, reduce_op::mean))
//
// Run: mpirun -np 2 build/examples/data_parallel  (as root, Open MPI also
// wants --allow-run-as-root). Each process prints its own loss; the
// parameters stay identical to the bit on every process, which the program
// checks at the end.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>
#include <fusor/mpi.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // A synthetic task: is the sum of a sample's features positive? Every
  // process draws the same data set (one seed) and trains on its own rows.
  constexpr std::size_t samples = 4096, features = 32, hidden = 64, batch = 256;
  constexpr int epochs = 20;
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> normal;
  xt::xtensor<double, 2> data(std::array<std::size_t, 2>{samples, features});
  for (auto& v : data) v = normal(rng);
  const xt::xtensor<double, 1> labels = xt::sum(data, {1}) > 0.0;
  xt::xtensor<double, 2> W1_0(std::array<std::size_t, 2>{features, hidden});
  xt::xtensor<double, 1> W2_0(std::array<std::size_t, 1>{hidden});
  for (auto& v : W1_0) v = 0.2 * normal(rng);
  for (auto& v : W2_0) v = 0.2 * normal(rng);

  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto W1 = fusor::shared(W1_0, "W1");
  auto b1 = fusor::shared(xt::xtensor<double, 1>(xt::zeros<double>({hidden})), "b1");
  auto W2 = fusor::shared(W2_0, "W2");
  auto b2 = fusor::shared(0.0, "b2");
  auto h = fusor::tanh(fusor::dot(x, W1) + b1);
  auto q = fusor::sigmoid(fusor::dot(h, W2) + b2);
  auto cost = fusor::mean(-y * fusor::log(q) - (1 - y) * fusor::log(1 - q));
  auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);

  const double lr = 0.5;
  auto avg = [](const auto& g) { return fusor::allreduce(g, MPI_COMM_WORLD, fusor::reduce_op::mean); };
  auto step = fusor::function(fusor::inputs(x, y), fusor::outputs(cost),
                              fusor::updates(fusor::update(W1, W1 - lr * avg(gW1)), fusor::update(b1, b1 - lr * avg(gb1)),
                                             fusor::update(W2, W2 - lr * avg(gW2)), fusor::update(b2, b2 - lr * avg(gb2))));

  // Each minibatch of `batch` samples is split into `size` shares.
  const std::size_t share = batch / static_cast<std::size_t>(size);
  const auto t0 = std::chrono::steady_clock::now();
  double loss = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    loss = 0;
    int steps = 0;
    for (std::size_t start = 0; start + batch <= samples; start += batch, ++steps) {
      const std::size_t from = start + share * static_cast<std::size_t>(rank);
      const xt::xtensor<double, 2> xs = xt::view(data, xt::range(from, from + share), xt::all());
      const xt::xtensor<double, 1> ys = xt::view(labels, xt::range(from, from + share));
      loss += step(xs, ys);
    }
    loss /= steps;
    if (epoch % 5 == 0 || epoch == epochs - 1) std::printf("process %d: epoch %2d, loss on its shares %.4f\n", rank, epoch, loss);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The replicas: process 0's parameters against every other process's, bit for bit.
  const auto w1 = W1.get_value();
  std::vector<double> root(w1.begin(), w1.end());
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int same = std::memcmp(root.data(), w1.data(), root.size() * sizeof(double)) == 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%d processes, %d epochs of %zu samples (minibatch %zu, %zu per process): %.3f s, %.1f us per step\n", size,
                epochs, samples, batch, share, seconds, 1e6 * seconds / (epochs * (samples / batch)));
    std::printf("parameters identical on every process: %s\n", all ? "yes" : "NO");
    // The plan's communication steps (f.plan() prints the whole plan).
    std::printf("\nthe step's communication steps, on process 0:\n");
    const std::string plan = step.plan();
    for (std::size_t at = 0, end; at < plan.size(); at = end + 1) {
      end = plan.find('\n', at);
      if (end == std::string::npos) end = plan.size();
      const std::string line = plan.substr(at, end - at);
      if (line.find(" communicate ") != std::string::npos) std::printf("%s\n", line.c_str());
    }
  }
  MPI_Finalize();
  return all ? 0 : 1;
}
