// The doctest main of the multi-process tests: every process runs every test
// case (each collective needs all of them). Process 0 reports in full; the
// others report only their failures, each line marked with its process.
// It also counts the binary's allocations (mpi_test.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>

#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "../replace_new.hpp"
#include "../sanitizers/asan_options.hpp"

namespace mpi_test {
std::atomic<std::size_t> allocations{0};  // declared in mpi_test.hpp
}

void* test_allocate(std::size_t n, std::size_t align) noexcept {
  mpi_test::allocations.fetch_add(1, std::memory_order_relaxed);
  return test_new::system_allocate(n, align);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  doctest::Context context(argc, argv);
  // mpirun may hand the processes a terminal, where doctest would colour its
  // summary line: the suite's counter reads it as plain text.
  context.setOption("no-colors", true);
  if (rank != 0) context.setOption("minimal", true);
  const int failed = context.run();
  // Every process's verdict, so that process 0's summary is the job's.
  int any = failed != 0, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && all && !failed) std::printf("[process 0] another process failed a test case (see its lines)\n");
  MPI_Finalize();
  return all ? 1 : 0;
}
