// Partitioned shared variables (fusor/mpi/partitioned.hpp), run by every
// process of MPI_COMM_WORLD (2 and 4 processes in the suite): the split, the
// halo exchange along the first axis and another, a distributed Jacobi
// stencil equal bit for bit to the same stencil on one process, gathering
// and saving, no allocation in steady calls, and slabs that disagree: every
// process stops with an error, none waits forever.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>
#include <fusor/io/npz.hpp>
#include <fusor/mpi.hpp>

#include "mpi_test.hpp"

using mpi_test::allocations;
using mpi_test::normal_matrix;
using mpi_test::rank;
using mpi_test::same_everywhere;
using mpi_test::size;

namespace {

using grid = xt::xtensor<double, 2>;

/// A grid of random values whose top row is 1.0 (the same on every process).
grid initial_grid(std::size_t rows, std::size_t cols) {
  grid u = normal_matrix(rows, cols, 7);
  for (std::size_t j = 0; j < cols; ++j) u(0, j) = 1.0;
  return u;
}

/// One Jacobi step of variable U, reading its neighbours from H (U itself on
/// one process, its halo when partitioned): u[1:-1, 1:-1] = mean of the four.
template <class V, class R>
auto jacobi_function(V& U, const R& H) {
  using fusor::_;
  using fusor::range;
  auto h = [&](auto r, auto c) { return fusor::view(H, r, c); };
  return fusor::function(
      fusor::inputs(),
      fusor::updates(fusor::update(fusor::view(U, range(1, -1), range(1, -1)),
                                   (h(range(_, -2), range(1, -1)) + h(range(2, _), range(1, -1)) +
                                    h(range(1, -1), range(_, -2)) + h(range(1, -1), range(2, _))) *
                                       0.25)));
}

/// The grid after `steps` Jacobi steps on one process.
grid jacobi_on_one_process(const grid& u0, int steps) {
  auto U = fusor::shared(u0, "u");
  auto step = jacobi_function(U, U);
  for (int k = 0; k < steps; ++k) step();
  return U.get_value();
}

/// The cells [begin, end) of `a` along `axis` (0 or 1).
template <class A>
A cells(const A& a, std::size_t axis, std::size_t begin, std::size_t end) {
  if (axis == 0) return xt::view(a, xt::range(begin, end));
  return xt::view(a, xt::all(), xt::range(begin, end));
}

bool same_bits(const grid& a, const grid& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("partition: every cell owned by one process, slabs of owned cells and ghosts, blocks within one") {
  for (std::size_t ghost : {1u, 2u})
    for (int p = 1; p <= 5; ++p)
      for (std::size_t n : {2 * ghost + static_cast<std::size_t>(p) * ghost, std::size_t{13}, std::size_t{40}}) {
        if (p > 1 && (n - 2 * ghost) / static_cast<std::size_t>(p) < ghost) continue;
        CAPTURE(ghost);
        CAPTURE(p);
        CAPTURE(n);
        std::size_t next = 0, shortest = n, longest = 0;
        for (int r = 0; r < p; ++r) {
          const auto q = fusor::partition::of(n, p, r, 0, ghost);
          CHECK(q.owned_begin == next);  // owned cells in rank order, none twice, none missed
          next = q.owned_end;
          if (p == 1) {
            CHECK((q.begin == 0 && q.end == n));
            continue;
          }
          const std::size_t first = r == 0 ? ghost : q.owned_begin, last = r == p - 1 ? n - ghost : q.owned_end;
          CHECK(q.begin == first - ghost);  // the block with `ghost` cells on either side
          CHECK(q.end == last + ghost);
          CHECK(last - first >= ghost);  // a neighbour's ghosts lie inside the block
          shortest = std::min(shortest, last - first);
          longest = std::max(longest, last - first);
        }
        CHECK(next == n);
        if (p > 1) CHECK(longest - shortest <= 1);
      }
  // Too short an axis for so many processes: refused, saying what it needs.
  try {
    (void)fusor::partition::of(5, 4, 0, 0, 1);
    FAIL("expected a value_error");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("cannot be split across 4 processes") != std::string::npos);
    CHECK(std::string(e.what()).find("at least 6") != std::string::npos);
  }
}

TEST_CASE("halo: a slab's ghost cells from its neighbours, along the first axis and along another") {
  for (std::size_t axis : {0u, 1u})
    for (std::size_t ghost : {1u, 2u}) {
      CAPTURE(axis);
      CAPTURE(ghost);
      // 3-D, so that along axis 1 a ghost block is strided (an MPI vector type).
      xt::xtensor<double, 3> global = axis == 0 ? xt::xtensor<double, 3>(xt::arange<double>(0, 21 * 5 * 3).reshape({21, 5, 3}))
                                                : xt::xtensor<double, 3>(xt::arange<double>(0, 3 * 22 * 4).reshape({3, 22, 4}));
      auto u = fusor::partitioned_shared(global, MPI_COMM_WORLD, {.axis = axis, .ghost = ghost, .name = "u"});
      const auto& q = u.layout();
      CHECK(q.processes == size());
      CHECK(q.rank == rank());
      const xt::xtensor<double, 3> slab = cells(global, axis, q.begin, q.end);
      CHECK(u.local().get_value() == slab);
      // Ghost cells spoiled: the exchange restores them from the neighbours.
      xt::xtensor<double, 3> spoiled = slab;
      for (std::size_t c = 0; c < q.length(); ++c) {
        const std::size_t at = q.begin + c;
        if (at >= q.owned_begin && at < q.owned_end) continue;
        if (axis == 0) xt::view(spoiled, c) = -1.0;
        else xt::view(spoiled, xt::all(), c) = -1.0;
      }
      if (size() > 1) CHECK(spoiled != slab);
      u.local().set_value(spoiled);
      // The halo as an output: computed into the output's buffer, from a copy.
      CHECK(xt::xtensor<double, 3>(fusor::eval(u.halo())) == slab);
      CHECK(u.local().get_value() == spoiled);
      {
        // Read by a larger expression while the caller holds a view of the
        // slab's buffer: also from a copy, and what the view shows is unchanged.
        const auto held = u.local().get_value(fusor::borrow);
        CHECK(xt::xtensor<double, 3>(fusor::eval(u.halo() * 2.0)) == slab * 2.0);
        CHECK(u.local().get_value() == spoiled);
      }
      // Otherwise the ghost cells of the variable's own buffer are refreshed
      // in place (no copy of the slab), and the expression reads them there.
      const void* before = u.local().get_value(fusor::borrow).data();
      CHECK(xt::xtensor<double, 3>(fusor::eval(u.halo() * 2.0)) == slab * 2.0);
      CHECK(u.local().get_value() == slab);
      CHECK(u.local().get_value(fusor::borrow).data() == before);
    }
}

TEST_CASE("distributed Jacobi equals the same stencil on one process, bit for bit, split along either axis") {
  const grid u0 = initial_grid(29, 17);
  const grid reference = jacobi_on_one_process(u0, 40);
  for (std::size_t axis : {0u, 1u}) {
    CAPTURE(axis);
    auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = axis, .ghost = 1, .name = "u"});
    auto U = u.local();
    auto step = jacobi_function(U, u.halo());
    for (int k = 0; k < 40; ++k) step();
    CHECK(same_bits(u.gather_all(), reference));
    const grid root = u.gather(0);
    if (rank() == 0) CHECK(same_bits(root, reference));
    else CHECK(root.size() == 0);
    // The plan: the exchange, over the slab's own buffer (no temporary), then
    // the stencil into a spare buffer (it reads the slab shifted), as on one
    // process.
    CHECK(step.plan().find("communicate var:u") != std::string::npos);
    CHECK(step.plan().find("halo(u, axis " + std::to_string(axis) + ", ghost 1)") != std::string::npos);
    CHECK(step.last_plan().arena_bytes == 0);
    CHECK(!step.update_was_in_place(0));
    // Every process's owned cells are the reference's.
    const auto& q = u.layout();
    const grid owned = cells(U.get_value(), axis, q.owned_begin - q.begin, q.owned_end - q.begin);
    CHECK(same_bits(owned, grid(cells(reference, axis, q.owned_begin, q.owned_end))));
  }
}

TEST_CASE("a steady halo step allocates nothing") {
  for (std::size_t axis : {0u, 1u}) {
    CAPTURE(axis);
    auto u = fusor::partitioned_shared(initial_grid(64, 48), MPI_COMM_WORLD, {.axis = axis, .ghost = 1, .name = "u"});
    auto U = u.local();
    auto step = jacobi_function(U, u.halo());
    for (int k = 0; k < 3; ++k) step();
    const std::size_t before = allocations.load();
    for (int k = 0; k < 50; ++k) step();
    CHECK(allocations.load() - before == 0);
  }
}

TEST_CASE("saving a partitioned variable: one .npz or .npy from process 0, or each process its slab") {
  const grid u0 = initial_grid(21, 6);
  auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "temperature"});
  const auto dir = std::filesystem::temp_directory_path() / ("fusor_mpi_test_np" + std::to_string(size()));
  if (rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  u.save(dir / "u.npz");
  u.save(dir / "u.npy");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() == 0) {
    const auto entries = fusor::read_npz(dir / "u.npz");
    REQUIRE(entries.count("temperature") == 1);
    auto back = fusor::load<grid>(dir / "u.npz", "temperature");
    CHECK(back.get_value() == u0);
    CHECK(fusor::load<grid>(dir / "u.npy").get_value() == u0);
  }
  // Each process its slab, ghosts included: an ordinary shared variable's save.
  const auto mine = dir / ("u." + std::to_string(rank()) + ".npy");
  fusor::save(u.local(), mine);
  CHECK(fusor::load<grid>(mine).get_value() == u.local().get_value());
  // A file process 0 cannot write: an error on every process, none waits.
  std::string message;
  try {
    u.save(dir / "no such directory" / "u.npz");
  } catch (const fusor::error& e) {
    message = e.what();
  }
  CHECK(message.find("process 0 could not write") != std::string::npos);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() == 0) std::filesystem::remove_all(dir);
}

TEST_CASE("slabs that disagree: every process stops with an error, none waits, nothing changes") {
  const grid u0 = initial_grid(25, 9);
  auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
  auto U = u.local();
  auto step = jacobi_function(U, u.halo());
  step();
  const grid before = U.get_value();
  const int last = size() - 1;
  // The last process's slab gets another column count: the exchange would
  // move blocks of different sizes.
  if (rank() == last) U.set_value(grid(xt::zeros<double>({before.shape(0), std::size_t{10}})));
  const grid mine = U.get_value();
  std::string message;
  try {
    step();
  } catch (const fusor::shape_error& e) {
    message = e.what();
  }
  if (size() > 1) {
    CHECK(message.find("disagree") != std::string::npos);
    CHECK(message.find("process " + std::to_string(last)) != std::string::npos);
    CHECK(same_bits(U.get_value(), mine));  // nothing changed on any process
    message.clear();
    try {
      (void)u.gather_all();
    } catch (const fusor::shape_error& e) {
      message = e.what();
    }
    CHECK(message.find("differs") != std::string::npos);
  } else {
    CHECK(message.empty());  // one process: nothing to disagree with
  }
  // A slab too short for its ghosts on the last process: refused there when
  // planned, and the others stop at the agreement.
  if (rank() == last) U.set_value(grid(xt::zeros<double>({std::size_t{2}, std::size_t{9}})));
  else U.set_value(before);
  if (size() > 1) CHECK_THROWS_AS(step(), fusor::error);
  // Restored, every process goes on.
  U.set_value(before);
  step();
  CHECK(same_everywhere(&u.layout().extent, sizeof(std::size_t)));
}

TEST_CASE("a halo exchange has no gradient: refused when grad is called") {
  auto u = fusor::partitioned_shared(initial_grid(25, 9), MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
  CHECK_THROWS_AS((void)fusor::grad(fusor::sum(u.halo()), u.local()), fusor::value_error);
}
