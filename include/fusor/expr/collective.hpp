// fusor/expr/collective.hpp — a value computed together by several processes.
//
// A collective node (an allreduce over MPI, fusor/mpi.hpp) is an expression
// like any other: it can be an output, part of an update or of a larger
// expression, and the planner gives it a step of its own (a communication
// step: its operand in memory, its result in a temporary of the arena).
// fusor's core does not know the transport. The node holds a
// `collective_op`, an object of the transport's layer that says how the node
// prints, keys and runs, and how the processes agree before a call's first
// collective: the core never includes MPI's headers, and a program built
// without MPI is the same program as before.
//
// The agreement (a failed call changes nothing, on any process, and never
// leaves another process waiting): before the first collective step of every
// call, each process says whether it got there and which collectives (dtypes
// and element counts) the call will run; a process that fails earlier (a
// refused argument, a shape error while planning) says so from its error
// path instead (`abandon_collectives`). Every process then either goes on, or
// throws — the one that failed its own error, the others one that names it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/node.hpp"

namespace fusor {

/// An operation several processes run together, as fusor's steps see it.
/// Implemented by a transport's layer (fusor/mpi.hpp); immutable once made.
class collective_op {
 public:
  virtual ~collective_op() = default;
  /// How the node prints: `allreduce(gw, mean)`.
  virtual std::string text(std::string_view operand) const = 0;
  /// Its run-time parameters, for the node's key (equal keys: one node).
  virtual void append_params(std::vector<std::uint64_t>& key) const = 0;
  /// Which processes take part: operations with the same group agree once
  /// per call (an MPI communicator's handle).
  virtual std::uint64_t group() const = 0;
  /// dest = the operation over every process of the value at `src`, of
  /// dtype t and this process's `shape`, in C order (host memory; src ==
  /// dest: in place).
  virtual void run(const void* src, void* dest, const dims& shape, dtype t) const = 0;
  /// Refuses a shape the operation cannot move (with a fusor::shape_error),
  /// when the call is planned: before any process communicates.
  virtual void check_shape(const dims& shape) const { (void)shape; }
  /// Whether running `other` (of the same dtype) together with this one, as
  /// one operation over the two operands side by side, gives both results: an
  /// elementwise operation over the same processes (two allreduces of one
  /// kind over one communicator), so that a plan may send them as one message.
  virtual bool combines_with(const collective_op& other) const {
    (void)other;
    return false;
  }
  /// Whether the operation may run in place over its operand's buffer when
  /// the operand is a shared variable: its result is then the variable
  /// itself. Only for an operation that changes no cell the variable's owner
  /// computes (a halo exchange refreshes ghost cells, a cache of the
  /// neighbours' cells); a reduction would change the variable.
  virtual bool over_variable() const { return false; }
  /// Whether every process's operand has the same extent along `axis`
  /// (agreed before the call's first collective); an exchange between
  /// neighbours of a partitioned variable lets the partitioned axis differ.
  virtual bool same_extent_everywhere(std::size_t axis) const {
    (void)axis;
    return true;
  }
  /// The agreement before a call's first collective (above). `ok`: this
  /// process got there; `signature`: a hash of the collectives it will run,
  /// `what` the same in words. Returns normally when every process got there
  /// with the same signature; otherwise throws fusor::error on every process
  /// where ok is true, and returns (without throwing) where it is false.
  virtual void agree(bool ok, std::uint64_t signature, const std::string& what) const = 0;
  /// The operation the gradient applies to the adjoint (the adjoint of a sum
  /// over processes is the sum of the adjoints); throws where there is none.
  virtual std::shared_ptr<const collective_op> adjoint() const = 0;
};

/// A collective over its operand's value (read from memory).
template <class A>
class collective_node : public expression_base {
 public:
  using value_type = value_type_t<A>;
  static constexpr int rank = A::rank;
  collective_node(A arg, std::shared_ptr<const collective_op> op) : arg_(FUSOR_MOVE(arg)), op_(FUSOR_MOVE(op)) {}
  FUSOR_PLUMBING const A& arg() const noexcept { return arg_; }
  const collective_op& op() const noexcept { return *op_; }
  const std::shared_ptr<const collective_op>& shared_op() const noexcept { return op_; }
  std::string str() const { return op_->text(arg_.str()); }

  // The node protocol (expr/node.hpp): its operand, in memory.
  static constexpr bool holds = true;
  using operand_types = detail::tlist<A>;
  static constexpr unsigned from_memory = 1;
  FUSOR_PLUMBING auto held() const noexcept { return detail::held(arg_); }
  template <class H>
  auto remake(H h) const {
    return collective_node<H>(FUSOR_MOVE(h), op_);
  }
  void append_params(std::vector<std::uint64_t>& key) const { op_->append_params(key); }

 private:
  A arg_;
  std::shared_ptr<const collective_op> op_;
};

/// The collectives of one graph, and the state of the current call's agreement.
struct collective_table {
  std::vector<std::shared_ptr<const collective_op>> ops;  ///< by graph_node::leaf
  /// Whether this call has no agreement ahead (set before an agreement runs,
  /// so that an error it throws is not followed by another agreement from the
  /// error path, and cleared after it when another follows in the same call);
  /// cleared when a call starts.
  mutable bool agreed = false;
  bool empty() const noexcept { return ops.empty(); }
  /// The index of `op` in the table, added if it is not there.
  FUSOR_RUNTIME int add(std::shared_ptr<const collective_op> op);
  /// Every group once, in the order of its first operation: the order in
  /// which every process agrees.
  template <class F>
  void for_each_group(F&& f) const {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      bool first = true;
      for (std::size_t j = 0; j < i && first; ++j) first = ops[j]->group() != ops[i]->group();
      if (first) f(*ops[i]);
    }
  }
  /// Every group agrees (above); `again`: another agreement follows in this call.
  FUSOR_RUNTIME void agree(std::uint64_t signature, const std::string& what, bool again) const;
  /// From a failing call's error path, before its next agreement: tells the
  /// other processes this one will not take part (they throw; this one returns).
  FUSOR_RUNTIME void abandon() const;
};

/// One call's part in the agreement: clears it when the call starts, and
/// when the call leaves by an exception before its agreement, tells the
/// other processes (collective_table::abandon). Costs nothing in a graph
/// without collectives.
class collective_scope {
 public:
  explicit collective_scope(const collective_table& t) noexcept : t_(t), exceptions_(std::uncaught_exceptions()) {
    t_.agreed = false;
  }
  collective_scope(const collective_scope&) = delete;
  collective_scope& operator=(const collective_scope&) = delete;
  ~collective_scope() {
    if (!t_.empty()) leave();
  }

 private:
  /// When the call leaves by an exception: tells the other processes.
  FUSOR_RUNTIME void leave() const noexcept;

  const collective_table& t_;
  int exceptions_;
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/expr/impl/collective.ipp"
#endif
