// test/mpi/mpi_test.hpp — what the multi-process test units share: this
// process's place in MPI_COMM_WORLD, comparing bytes across processes, and
// the count of allocations (the binary replaces operator new: main.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <fusor/mpi.hpp>

namespace mpi_test {

/// Every allocation through operator new in this binary, counted.
extern std::atomic<std::size_t> allocations;

inline int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// Whether `bytes` are the same on every process (compared with process 0's).
inline bool same_everywhere(const void* data, std::size_t bytes) {
  std::vector<char> root(bytes);
  if (rank() == 0) std::memcpy(root.data(), data, bytes);
  MPI_Bcast(root.data(), static_cast<int>(bytes), MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = std::memcmp(root.data(), data, bytes) == 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

/// The same pseudo-random matrix on every process (a fixed seed).
inline xt::xtensor<double, 2> normal_matrix(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  xt::xtensor<double, 2> m(std::array<std::size_t, 2>{rows, cols});
  for (auto& v : m) v = normal(rng);
  return m;
}

}  // namespace mpi_test
