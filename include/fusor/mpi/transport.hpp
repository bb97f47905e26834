// fusor/mpi/transport.hpp — what fusor's MPI collectives share: MPI's C
// header, datatypes, error checks, and the agreement every call runs before
// its first collective (expr/collective.hpp).
#pragma once

// The MPI standard's C API only: not the C++ bindings some MPI headers add
// (removed from the standard in MPI-3).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/expr/collective.hpp"

namespace fusor::mpi_detail {

inline MPI_Datatype datatype(dtype t, const char* who) {
  switch (t) {
    case dtype::int8: return MPI_INT8_T;
    case dtype::uint8: return MPI_UINT8_T;
    case dtype::int16: return MPI_INT16_T;
    case dtype::uint16: return MPI_UINT16_T;
    case dtype::int32: return MPI_INT32_T;
    case dtype::uint32: return MPI_UINT32_T;
    case dtype::int64: return MPI_INT64_T;
    case dtype::uint64: return MPI_UINT64_T;
    case dtype::float32: return MPI_FLOAT;
    case dtype::float64: return MPI_DOUBLE;
    case dtype::bool_: return MPI_C_BOOL;
  }
  throw dtype_error(std::string(who) + ": no MPI datatype for " + std::string(name(t)));
}

/// Throws fusor::error with MPI's own words where an MPI call failed.
inline void check(int rc, const char* who, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw error(std::string(who) + ": " + call + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

/// Refuses to build anything over MPI before MPI_Init or after MPI_Finalize.
inline void require_initialised(const char* who) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (!initialised || finalised)
    throw error(std::string(who) + ": MPI is not initialised (or already finalised): call MPI_Init (or "
                "MPI_Init_thread) before building anything that communicates, and MPI_Finalize after the last call");
}

/// This process's place in a communicator.
struct comm_place {
  int size = 1, rank = 0;
};

/// The place of this process in `comm`, refused (naming `who`) before MPI_Init,
/// after MPI_Finalize, or for MPI_COMM_NULL.
inline comm_place place_in(MPI_Comm comm, const char* who) {
  require_initialised(who);
  if (comm == MPI_COMM_NULL) throw value_error(std::string(who) + ": the communicator is MPI_COMM_NULL");
  comm_place p;
  check(MPI_Comm_size(comm, &p.size), who, "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &p.rank), who, "MPI_Comm_rank");
  return p;
}

/// A collective over one communicator: its group, and the agreement
/// (collective_op::agree) every operation over MPI runs the same way.
class mpi_collective : public collective_op {
 public:
  mpi_collective(MPI_Comm comm, const char* who) : comm_(comm), who_(who) {
    const comm_place p = place_in(comm, who);
    size_ = p.size;
    rank_ = p.rank;
  }

  MPI_Comm comm() const noexcept { return comm_; }
  int size() const noexcept { return size_; }
  int rank() const noexcept { return rank_; }

  std::uint64_t group() const override {
    // MPI_Comm is a pointer in Open MPI and an int in MPICH: its Fortran
    // handle is an integer in both.
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(MPI_Comm_c2f(comm_)));
  }

  /// One MPI_Allreduce (MAX) of four int64s: whether any process failed and
  /// which, and the signature and its negation (equal on every process
  /// exactly when the maximum of one is minus the maximum of the other).
  void agree(bool ok, std::uint64_t signature, const std::string& what) const override {
    const auto s = static_cast<std::int64_t>(signature >> 1);  // 63 bits: its negation fits
    std::int64_t v[4] = {ok ? 0 : 1, ok ? 0 : rank_ + 1, ok ? s : INT64_MIN, ok ? -s : INT64_MIN};
    mpi_detail::check(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm_), who_, "MPI_Allreduce (the call's agreement)");
    if (v[0]) {
      if (!ok) return;  // this process's own error is the one it reports
      throw error("fusor: process " + std::to_string(v[1] - 1) + " of the communicator failed this call; this "
                  "process stopped where they were to agree, and no process changed any shared variable (see that "
                  "process's error)");
    }
    if (v[2] == -v[3]) return;
    // The processes would move different shapes: every process learns them all.
    constexpr int width = 480;
    std::vector<char> mine(width, '\0'), all(static_cast<std::size_t>(width) * static_cast<std::size_t>(size_), '\0');
    std::memcpy(mine.data(), what.data(), std::min<std::size_t>(what.size(), width - 1));
    mpi_detail::check(MPI_Allgather(mine.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm_), who_,
          "MPI_Allgather (the call's agreement)");
    std::string msg = "fusor: the processes disagree on the collectives of this call (expected the same collectives "
                      "of the same dtypes and shapes on every process, a partitioned axis aside); nothing was changed "
                      "on any process:";
    for (int p = 0; p < size_; ++p)
      msg += std::string("\n  process ") + std::to_string(p) + (p == rank_ ? " (this one)" : "") + ": " +
             std::string(all.data() + static_cast<std::size_t>(p) * width);
    throw shape_error(msg);
  }

 protected:
  void check(int rc, const char* call) const { mpi_detail::check(rc, who_, call); }

  MPI_Comm comm_;
  const char* who_;  ///< how errors name the operation: "fusor::allreduce"
  int size_ = 1;
  int rank_ = 0;  ///< this process's, in comm
};

}  // namespace fusor::mpi_detail
