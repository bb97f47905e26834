// The Jacobi stencil of examples/jacobi.cpp on several processes: the grid is
// split into slabs of rows, one per process, each with one ghost row on
// either side; every step exchanges the ghost rows with the neighbours (a
// communication step in the plan) and updates the process's own rows. The
// stencil is the one-process code with its reads taken from the exchanged
// slab:
//
//   u[1:-1, 1:-1] = (h[:-2, 1:-1] + h[2:, 1:-1] + h[1:-1, :-2] + h[1:-1, 2:]) / 4,   h = halo(u)
//
// After 1000 steps process 0 gathers the grid and compares it with the same
// 1000 steps on one process (examples/jacobi.cpp's function): they must be
// equal to the bit, or the program exits with 1. It also saves the grid as
// one .npz, from process 0.
//
// Run: mpirun -np 2 build/examples/distributed_jacobi  (as root, Open MPI
// also wants --allow-run-as-root).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <fusor/fusor.hpp>
#include <fusor/mpi.hpp>

namespace {

constexpr std::size_t n = 512;  // grid points per side, the border included
constexpr int steps = 1000;

/// One Jacobi step of u's interior, reading the neighbours from `h` (u itself
/// on one process, u's exchanged slab on several).
template <class U, class H>
auto jacobi_step(U& u, const H& h) {
  using fusor::_;
  using fusor::range;
  auto at = [&](auto r, auto c) { return fusor::view(h, r, c); };
  return fusor::function(fusor::inputs(),
                         fusor::updates(fusor::update(fusor::view(u, range(1, -1), range(1, -1)),
                                                      (at(range(_, -2), range(1, -1)) + at(range(2, _), range(1, -1)) +
                                                       at(range(1, -1), range(_, -2)) + at(range(1, -1), range(2, _))) *
                                                          0.25)));
}

template <class F>
double seconds_per_step(F& step) {
  step();  // the first call plans
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 1; k < steps; ++k) step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / (steps - 1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // The initial grid, the same on every process: 0 everywhere, the top row 1.0.
  xt::xtensor<double, 2> u0 = xt::zeros<double>({n, n});
  for (std::size_t j = 0; j < n; ++j) u0(0, j) = 1.0;

  // Each process keeps its slab of rows (and a ghost row on either side).
  auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
  auto U = u.local();
  const auto& part = u.layout();
  std::printf("process %d of %d: rows [%zu, %zu) of %zu, its slab [%zu, %zu)\n", rank, size, part.owned_begin,
              part.owned_end, part.extent, part.begin, part.end);

  auto step = jacobi_step(U, u.halo());
  MPI_Barrier(MPI_COMM_WORLD);
  const double distributed_s = seconds_per_step(step);
  const xt::xtensor<double, 2> whole = u.gather();  // on process 0

  const auto file = std::filesystem::temp_directory_path() / "fusor_distributed_jacobi.npz";
  u.save(file);  // one .npz, written by process 0

  int failed = 0;
  if (rank == 0) {
    // The same steps on one process, with the one-process function.
    auto V = fusor::shared(u0, "u");
    auto alone = jacobi_step(V, V);
    const double alone_s = seconds_per_step(alone);
    const xt::xtensor<double, 2> reference = V.get_value();
    const bool same = std::memcmp(whole.data(), reference.data(), n * n * sizeof(double)) == 0;
    failed = !same;
    std::printf("\nJacobi on a %zu x %zu grid, %d steps, %d processes\n", n, n, steps, size);
    std::printf("u[i, %zu] for i = 1, 4, 16, 64: %.6f %.6f %.6f %.6f\n", n / 2, whole(1, n / 2), whole(4, n / 2),
                whole(16, n / 2), whole(64, n / 2));
    std::printf("gathered grid equals one process's: %s\n", same ? "yes, bit for bit" : "NO (FAILED)");
    std::printf("time per step: %d processes %.1f us, one process %.1f us\n", size, distributed_s * 1e6,
                alone_s * 1e6);
    std::printf("saved to %s (entry 'u', %zu x %zu)\n", file.string().c_str(), n, n);
    std::printf("\nthe plan of a step on process 0:\n%s", step.plan().c_str());
    std::filesystem::remove(file);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
