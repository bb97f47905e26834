// fusor/mpi.hpp — collectives over MPI: data-parallel training in a few words.
//
//   #include <fusor/fusor.hpp>
//   #include <fusor/mpi.hpp>        // and link MPI (meson: dependency('mpi', language : 'cpp'))
//   auto step = fusor::function(fusor::inputs(x, y),
//       fusor::updates(fusor::update(w, w - lr * fusor::allreduce(gw, MPI_COMM_WORLD, fusor::reduce_op::mean))));
//
// `fusor::allreduce(e, comm[, op])` is an expression: the elementwise
// reduction of e's value over every process of `comm`. It can be an output,
// part of an update or of a larger expression; the plan shows it as a
// communication step (its operand in the arena, the result in a temporary:
// a steady call allocates nothing), and every call agrees first, in one small
// collective, on the shapes and dtypes it will move: processes whose calls
// differ (another batch shape, a refused argument on one of them) all stop
// with a fusor::error naming the process and the shapes, instead of waiting
// forever or exchanging mismatched buffers; a failed call changes nothing on
// any process (expr/collective.hpp).
//
// Optional: only a program that includes this header needs MPI. Open MPI and
// MPICH both work (only the MPI standard's C API is used).
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
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusor/fusor.hpp"
#include "fusor/expr/collective.hpp"

namespace fusor {

/// How allreduce combines the processes' values.
enum class reduce_op { sum, mean, max, min };

namespace mpi_detail {

inline const char* op_name(reduce_op op) noexcept {
  switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::mean: return "mean";
    case reduce_op::max: return "max";
    case reduce_op::min: return "min";
  }
  return "?";
}

inline MPI_Datatype datatype(dtype t) {
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
    case dtype::bool_: break;
  }
  throw dtype_error("fusor::allreduce: no MPI datatype for " + std::string(name(t)));
}

inline void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw error(std::string("fusor::allreduce: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

/// An allreduce over one communicator (expr/collective.hpp's operation).
class allreduce_op final : public collective_op {
 public:
  allreduce_op(MPI_Comm comm, reduce_op op) : comm_(comm), op_(op) {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (!initialised || finalised)
      throw error("fusor::allreduce: MPI is not initialised (or already finalised): call MPI_Init (or "
                  "MPI_Init_thread) before building an expression with a collective, and MPI_Finalize after the "
                  "last call");
    if (comm == MPI_COMM_NULL) throw value_error("fusor::allreduce: the communicator is MPI_COMM_NULL");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  }

  std::string text(std::string_view operand) const override {
    return "allreduce(" + std::string(operand) + ", " + op_name(op_) + ")";
  }
  void append_params(std::vector<std::uint64_t>& key) const override {
    key.push_back(group());
    key.push_back(static_cast<std::uint64_t>(op_));
  }
  std::uint64_t group() const override {
    // MPI_Comm is a pointer in Open MPI and an int in MPICH: its Fortran
    // handle is an integer in both.
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(MPI_Comm_c2f(comm_)));
  }
  /// Refuses what MPI cannot combine, when the expression is built.
  void check_dtype(dtype t) const {
    if (t == dtype::bool_)
      throw dtype_error(std::string("fusor::allreduce(..., ") + op_name(op_) +
                        "): expected a numeric dtype, received bool (cast to an integer dtype first)");
    if (op_ == reduce_op::mean && !is_floating(t))
      throw dtype_error("fusor::allreduce(..., mean): expected a floating dtype, received " + std::string(name(t)) +
                        " (cast to float32 or float64 first)");
  }
  void run(const void* src, void* dest, std::size_t count, dtype t) const override {
    const MPI_Datatype type = datatype(t);
    const MPI_Op op = op_ == reduce_op::max ? MPI_MAX : op_ == reduce_op::min ? MPI_MIN : MPI_SUM;
    const std::size_t esize = size_of(t);
    // MPI counts are ints: more elements go in pieces.
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min<std::size_t>(count - done, INT_MAX);
      auto* d = static_cast<std::byte*>(dest) + done * esize;
      const void* s = src == dest ? MPI_IN_PLACE : static_cast<const std::byte*>(src) + done * esize;
      check(MPI_Allreduce(s, d, static_cast<int>(n), type, op, comm_), "MPI_Allreduce");
      done += n;
    }
    if (op_ == reduce_op::mean && size_ > 1) {
      if (t == dtype::float32) scale(static_cast<float*>(dest), count);
      else scale(static_cast<double*>(dest), count);
    }
  }
  void agree(bool ok, std::uint64_t signature, const std::string& what) const override {
    const auto s = static_cast<std::int64_t>(signature >> 1);  // 63 bits: its negation fits
    std::int64_t v[4] = {ok ? 0 : 1, ok ? 0 : rank_ + 1, ok ? s : INT64_MIN, ok ? -s : INT64_MIN};
    check(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm_), "MPI_Allreduce (the call's agreement)");
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
    check(MPI_Allgather(mine.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm_),
          "MPI_Allgather (the call's agreement)");
    std::string msg = "fusor: the processes disagree on the collectives of this call (expected the same shapes and "
                      "dtypes on every process); nothing was changed on any process:";
    for (int p = 0; p < size_; ++p)
      msg += std::string("\n  process ") + std::to_string(p) + (p == rank_ ? " (this one)" : "") + ": " +
             std::string(all.data() + static_cast<std::size_t>(p) * width);
    throw shape_error(msg);
  }
  std::shared_ptr<const collective_op> adjoint() const override {
    if (op_ == reduce_op::max || op_ == reduce_op::min)
      throw value_error(std::string("fusor::grad: allreduce(..., ") + op_name(op_) +
                        ") has no gradient here (only sum and mean are differentiated)");
    return std::make_shared<allreduce_op>(comm_, op_);
  }

 private:
  template <class T>
  void scale(T* p, std::size_t n) const {
    const T k = T(1) / static_cast<T>(size_);
    for (std::size_t i = 0; i < n; ++i) p[i] *= k;
  }

  MPI_Comm comm_;
  reduce_op op_;
  int size_ = 1;
  int rank_ = 0;  ///< this process's, in comm
};

}  // namespace mpi_detail

/// The elementwise reduction of `x` over every process of `comm` (sum, mean,
/// max or min): an expression of x's dtype and shape. Every process of comm
/// must call the function (or eval) that computes it, with the same shapes.
template <class X>
  requires(operand<X> && !element<std::remove_cvref_t<X>>)
[[nodiscard]] auto allreduce(X&& x, MPI_Comm comm, reduce_op op = reduce_op::sum) {
  using A = as_expression_t<X>;
  auto o = std::make_shared<mpi_detail::allreduce_op>(comm, op);
  o->check_dtype(dtype_of<value_type_t<A>>);
  return collective_node<A>(as_expression(std::forward<X>(x)), std::move(o));
}

}  // namespace fusor
