// fusor's allreduce step against a raw MPI_Allreduce of the same bytes, in
// the same binary, and the data-parallel perceptron step. Run under mpirun:
//
//   mpirun -np 2 build-bench/bench/bench_mpi           (both parts)
//   mpirun -np 1 build-bench/bench/bench_mpi --step    (the steps alone, for scaling)
//
// Allreduce: float64 sums of 4 KiB to 256 MiB. The raw call reduces one
// buffer into another; fusor's function is `outputs(Out(allreduce(x), borrow))`
// with x a borrowed input, so its step reduces the argument straight into the
// function's own output buffer (no copy: the plan has one communicate step),
// plus the call's agreement. Each size: a barrier, then enough calls for about
// 0.2 s; the time is the slowest process's. Bandwidth is the algorithm
// bandwidth (bytes / time); the ratio is fusor's over the raw call's.
//
// The step: a perceptron (784-128-1, tanh, cross-entropy) trained by grad on
// a global minibatch of 512 split over the processes, the four gradients
// averaged by allreduce in the step. Scaling efficiency = T(1) / (P T(P)) is
// computed from two runs (bench/README.md).
//
// The halo step: one Jacobi step of an n x n float64 grid split in slabs of
// rows (fusor::partitioned_shared, one ghost row on either side): fusor's
// function (the exchange as a communication step, the stencil fused) against
// a hand-written step in the same binary: two MPI_Sendrecv calls for the
// ghost rows, then a plain loop over the slab into a second buffer (swapped
// after the step). Both give the same grid (checked).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>
#include <fusor/mpi.hpp>

namespace {

int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Seconds per call of `call`, the slowest process's, over enough calls for
/// about `budget` seconds (the count agreed by all processes).
template <class F>
double seconds_per_call(F&& call, double budget = 0.2) {
  for (int i = 0; i < 3; ++i) call();  // warm: plans, buffers, MPI's connections
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = std::chrono::steady_clock::now();
  call();
  double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int n = std::max(3, static_cast<int>(budget / std::max(one, 1e-7)));
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) call();
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

void allreduce_table(int size) {
  const bool root = rank_of_world() == 0;
  if (root) {
    std::printf("allreduce, float64 sum, %d processes\n\n", size);
    std::printf("| bytes | raw MPI_Allreduce us | raw GB/s | fusor us | fusor GB/s | fusor / raw |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  }
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)),
                           fusor::outputs(fusor::Out(fusor::allreduce(x, MPI_COMM_WORLD), fusor::borrow)));
  for (std::size_t bytes = 4096; bytes <= (std::size_t{256} << 20); bytes *= 4) {
    const std::size_t n = bytes / sizeof(double);
    xt::xtensor<double, 1> send = xt::ones<double>({n}), recv = xt::zeros<double>({n});
    const double raw = seconds_per_call([&] {
      MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    });
    double check = 0;
    const double ours = seconds_per_call([&] {
      auto r = f(send);
      check += r(0);
    });
    if (recv(0) != size || check <= 0) std::printf("process %d: wrong sums\n", rank_of_world());
    if (root)
      std::printf("| %zu | %.1f | %.2f | %.1f | %.2f | %.3f |\n", bytes, raw * 1e6, bytes / raw / 1e9, ours * 1e6,
                  bytes / ours / 1e9, raw / ours);
  }
  if (root) std::printf("\n");
}

void perceptron_step(int size) {
  constexpr std::size_t global_batch = 512, features = 784, hidden = 128;
  const std::size_t share = global_batch / static_cast<std::size_t>(size);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  xt::xtensor<double, 2> xs(std::array<std::size_t, 2>{share, features});
  xt::xtensor<double, 1> ys(std::array<std::size_t, 1>{share});
  for (auto& v : xs) v = normal(rng);
  for (auto& v : ys) v = normal(rng) > 0 ? 1.0 : 0.0;
  xt::xtensor<double, 2> W1_0(std::array<std::size_t, 2>{features, hidden});
  xt::xtensor<double, 1> W2_0(std::array<std::size_t, 1>{hidden});
  for (auto& v : W1_0) v = 0.05 * normal(rng);
  for (auto& v : W2_0) v = 0.05 * normal(rng);
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
  auto avg = [](const auto& g) { return fusor::allreduce(g, MPI_COMM_WORLD, fusor::reduce_op::mean); };
  auto step = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow), fusor::In(y, fusor::borrow)),
                              fusor::updates(fusor::update(W1, W1 - 0.01 * avg(gW1)), fusor::update(b1, b1 - 0.01 * avg(gb1)),
                                             fusor::update(W2, W2 - 0.01 * avg(gW2)), fusor::update(b2, b2 - 0.01 * avg(gb2))));
  const double t = seconds_per_call([&] { step(xs, ys); }, 1.0);
  if (rank_of_world() == 0)
    std::printf("perceptron step (784-128-1, global minibatch %zu, %zu per process), %d processes: %.1f us\n",
                global_batch, share, size, t * 1e6);
}

/// One hand-written Jacobi step of a slab of `rows` x n (ghost rows
/// included): the ghost rows from the neighbours, then the interior.
void hand_halo_step(std::vector<double>& cur, std::vector<double>& next, std::size_t rows, std::size_t n, int rank,
                    int size) {
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const int count = static_cast<int>(n);
  MPI_Sendrecv(&cur[n], count, MPI_DOUBLE, up, 0, &cur[(rows - 1) * n], count, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(&cur[(rows - 2) * n], count, MPI_DOUBLE, down, 1, &cur[0], count, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  // Restrict-qualified rows, so that the compiler vectorises the inner loop.
  for (std::size_t i = 1; i + 1 < rows; ++i) {
    const double* __restrict above = &cur[(i - 1) * n];
    const double* __restrict row = &cur[i * n];
    const double* __restrict below = &cur[(i + 1) * n];
    double* __restrict out = &next[i * n];
    for (std::size_t j = 1; j + 1 < n; ++j) out[j] = (above[j] + below[j] + row[j - 1] + row[j + 1]) * 0.25;
  }
  std::swap(cur, next);
}

void halo_table(int size) {
  using fusor::_;
  using fusor::range;
  const int rank = rank_of_world();
  if (rank == 0) {
    std::printf("Jacobi step with a halo exchange, float64, slabs of rows, %d processes\n\n", size);
    std::printf("| grid | hand (Sendrecv + loop) us | fusor us | fusor / hand |\n| ---: | ---: | ---: | ---: |\n");
  }
  for (std::size_t n : {std::size_t{512}, std::size_t{2048}}) {
    // 1.0 inside and on the top edge, 0 on the other edges: the values stay
    // far from subnormal (which would make the timings depend on the step count).
    xt::xtensor<double, 2> u0 = xt::ones<double>({n, n});
    for (std::size_t k = 0; k < n; ++k) u0(n - 1, k) = u0(k, 0) = u0(k, n - 1) = 0.0;
    auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
    auto U = u.local();
    auto H = u.halo();
    auto h = [&](auto r, auto c) { return fusor::view(H, r, c); };
    auto step = fusor::function(
        fusor::inputs(), fusor::updates(fusor::update(fusor::view(U, range(1, -1), range(1, -1)),
                                                      (h(range(_, -2), range(1, -1)) + h(range(2, _), range(1, -1)) +
                                                       h(range(1, -1), range(_, -2)) + h(range(1, -1), range(2, _))) *
                                                          0.25)));
    const xt::xtensor<double, 2> slab0 = U.get_value();
    std::vector<double> cur(slab0.begin(), slab0.end()), next = cur;
    const std::size_t rows = u.layout().length();
    const double hand = seconds_per_call([&] { hand_halo_step(cur, next, rows, n, rank, size); });
    const double ours = seconds_per_call([&] { step(); });
    // The same number of steps on both sides? Compare one more step from equal grids.
    U.set_value(slab0);
    cur.assign(slab0.begin(), slab0.end());
    next = cur;
    for (int k = 0; k < 5; ++k) {
      step();
      hand_halo_step(cur, next, rows, n, rank, size);
    }
    const xt::xtensor<double, 2> mine = U.get_value();
    bool same = true;
    const auto& q = u.layout();
    for (std::size_t i = q.owned_begin - q.begin; i < q.owned_end - q.begin; ++i)
      same = same && std::memcmp(&mine(i, 0), &cur[i * n], n * sizeof(double)) == 0;
    if (!same) std::printf("process %d: fusor's grid differs from the hand-written step's\n", rank);
    if (rank == 0) std::printf("| %zu x %zu | %.1f | %.1f | %.2f |\n", n, n, hand * 1e6, ours * 1e6, ours / hand);
  }
  if (rank == 0) std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool step_only = argc > 1 && std::string(argv[1]) == "--step";
  if (!step_only) allreduce_table(size);
  halo_table(size);
  perceptron_step(size);
  MPI_Finalize();
  return 0;
}
