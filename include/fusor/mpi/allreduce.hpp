// fusor/mpi/allreduce.hpp — `fusor::allreduce(e, comm[, op])`: the
// elementwise reduction of e's value over every process of an MPI
// communicator, as an expression (fusor/mpi.hpp has the overview).
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/fusor.hpp"
#include "fusor/mpi/transport.hpp"

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

/// An allreduce over one communicator (expr/collective.hpp's operation).
class allreduce_op final : public mpi_collective {
 public:
  allreduce_op(MPI_Comm comm, reduce_op op) : mpi_collective(comm, "fusor::allreduce"), op_(op) {}

  std::string text(std::string_view operand) const override {
    return "allreduce(" + std::string(operand) + ", " + op_name(op_) + ")";
  }
  void append_params(std::vector<std::uint64_t>& key) const override {
    key.push_back(group());
    key.push_back(static_cast<std::uint64_t>(op_));
  }
  bool combines_with(const collective_op& other) const override {
    const auto* o = dynamic_cast<const allreduce_op*>(&other);
    if (!o || o->op_ != op_) return false;
    int same = MPI_UNEQUAL;
    return MPI_Comm_compare(o->comm_, comm_, &same) == MPI_SUCCESS && same == MPI_IDENT;
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
  void run(const void* src, void* dest, const dims& shape, dtype t) const override {
    const MPI_Datatype type = datatype(t, who_);
    const MPI_Op op = op_ == reduce_op::max ? MPI_MAX : op_ == reduce_op::min ? MPI_MIN : MPI_SUM;
    const std::size_t esize = size_of(t), count = shape.elements();
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

  reduce_op op_;
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
  return collective_node<A>(FUSOR_AS_EXPRESSION(x), FUSOR_MOVE(o));
}

}  // namespace fusor
