// Jacobi iteration for Laplace's equation on a 512 × 512 grid, written as an
// update of a view: every step replaces the interior of u by the mean of its
// four neighbours (the old values), the border stays as it is. In NumPy:
//
//   u[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) / 4
//
// The boundary: the top edge held at 1.0, the other three at 0. After 1000
// steps the result is checked against a plain C++ loop doing the same (two
// buffers, ping-pong, the border kept); the program exits with 1 when they
// differ by more than 1e-12.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include <fusor/fusor.hpp>

namespace {

constexpr std::size_t n = 512;   // grid points per side, the border included
constexpr int steps = 1000;

/// One Jacobi step as a plain loop: the interior of `next` from `cur`; the
/// border of `next` is not written (both buffers hold the same border).
void jacobi_loop(std::vector<double>& next, const std::vector<double>& cur) {
  for (std::size_t i = 1; i + 1 < n; ++i)
    for (std::size_t j = 1; j + 1 < n; ++j)
      next[i * n + j] = (cur[(i - 1) * n + j] + cur[(i + 1) * n + j] + cur[i * n + j - 1] + cur[i * n + j + 1]) * 0.25;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  using fusor::_;
  using fusor::range;

  // The initial grid: 0 everywhere, the top row 1.0.
  xt::xtensor<double, 2> u0 = xt::zeros<double>({n, n});
  for (std::size_t j = 0; j < n; ++j) u0(0, j) = 1.0;

  // u lives in a shared variable; v(r, c) is the view u[r, c] (lazy: reading
  // it is part of the fused loop, nothing is copied).
  auto U = fusor::shared(u0, "u");
  auto v = [&](auto r, auto c) { return fusor::view(U, r, c); };

  // One step as a compiled function with no inputs and no outputs, only an
  // update of u's interior. The update reads u shifted, so it cannot be done
  // in place: fusor writes it into a spare buffer, copies the rest of u (the
  // border) there first, and installs that buffer as u's new value. The two
  // buffers then alternate (ping-pong), and a call allocates nothing.
  auto step = fusor::function(
      fusor::inputs(),
      fusor::updates(fusor::update(v(range(1, -1), range(1, -1)),                       // u[1:-1, 1:-1] =
                                   (v(range(_, -2), range(1, -1)) + v(range(2, _), range(1, -1)) +   // up + down
                                    v(range(1, -1), range(_, -2)) + v(range(1, -1), range(2, _))) *  // + left + right
                                       0.25)));

  step();  // the first call plans; time the other steps
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 1; k < steps; ++k) step();
  const double fusor_s = seconds_since(t0) / (steps - 1);

  // The same with a plain loop over two buffers.
  std::vector<double> cur(u0.begin(), u0.end()), next = cur;
  jacobi_loop(next, cur);
  std::swap(cur, next);
  t0 = std::chrono::steady_clock::now();
  for (int k = 1; k < steps; ++k) {
    jacobi_loop(next, cur);
    std::swap(cur, next);
  }
  const double loop_s = seconds_since(t0) / (steps - 1);

  // Compare.
  const xt::xtensor<double, 2> u = U.get_value();
  double max_diff = 0.0;
  for (std::size_t i = 0; i < n * n; ++i) max_diff = std::max(max_diff, std::fabs(u.data()[i] - cur[i]));
  const bool ok = max_diff <= 1e-12;

  std::printf("Jacobi on a %zu x %zu grid (top edge 1.0, other edges 0), %d steps\n", n, n, steps);
  // The heat spreads down from the top edge: u along the middle column.
  std::printf("u[i, %zu] for i = 1, 4, 16, 64: %.6f %.6f %.6f %.6f\n", n / 2, u(1, n / 2), u(4, n / 2), u(16, n / 2),
              u(64, n / 2));
  std::printf("max |fusor - loop|     %.3g  (%s)\n", max_diff, ok ? "ok, <= 1e-12" : "FAILED, > 1e-12");
  std::printf("time per step: fusor   %.1f us\n", fusor_s * 1e6);
  std::printf("time per step: loop    %.1f us  (fusor / loop = %.2f)\n", loop_s * 1e6, fusor_s / loop_s);
  std::printf("updated in place: %s\n", step.update_was_in_place(0) ? "yes" : "no (spare buffer, ping-pong)");
  std::printf("\nthe plan of step():\n%s", step.plan().c_str());
  return ok ? 0 : 1;
}
