// fusor/mpi/partitioned.hpp — a shared variable split along one axis across
// the processes of a communicator, with ghost cells, and the halo exchange
// that refreshes them (domain decomposition: a distributed stencil).
//
//   auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
//   auto U = u.local();                    // this process's slab: a shared variable like any other
//   auto H = u.halo();                     // U with its ghost cells from the neighbours: an expression
//   auto h = [&](auto r, auto c) { return fusor::view(H, r, c); };
//   auto step = fusor::function(fusor::inputs(), fusor::updates(fusor::update(
//       fusor::view(U, range(1, -1), range(1, -1)),
//       (h(range(_, -2), range(1, -1)) + h(range(2, _), range(1, -1)) +
//        h(range(1, -1), range(_, -2)) + h(range(1, -1), range(2, _))) * 0.25)));
//   auto all = u.gather();                 // the whole array, on process 0
//
// The split. Along the axis, a global array of length n keeps `ghost` (g)
// cells at either end that only one process owns (the first process the
// first g, the last process the last g: a stencil's fixed boundary); the n -
// 2g cells between are divided into contiguous blocks, one per process in
// rank order, their lengths differing by at most one. Each process's slab is
// its block with g cells more on either side: a neighbour's cells (its
// ghosts), or at the two ends the global boundary, which that process owns.
// So a stencil of reach g written for the whole array, updating [g, n - g),
// is the same code on a slab: it updates exactly the cells the process owns
// in the interior, and reads its ghosts. The first process's slab starts at
// the array's start, the last's ends at its end.
//
// The halo exchange is a communication step in the plan (`u.halo()`, a
// collective node): the process receives its ghost cells from its
// neighbours while it sends them its own edge cells (non-blocking sends and
// receives, all four in flight at once). It runs over the slab's own buffer:
// `u.halo()` is the variable itself, its ghost cells refreshed, and a
// stencil that reads it shifted is computed into a spare buffer and
// installed, as on one process (no copy of the slab). Where the halo is an
// output, or the caller holds a view of the slab (get_value(borrow)), it runs
// on a copy in the arena instead. The ghost cells are a cache of the
// neighbours' cells: an exchange may refresh them in a call that then fails,
// and never changes a cell the process owns. Along the first axis a ghost
// block is one contiguous run; along another axis it is an MPI vector
// datatype (no packing by fusor). Every call agrees first, as every
// collective does (expr/collective.hpp), on dtypes and on every extent but
// the partitioned one.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusor/fusor.hpp"
#include "fusor/io/npz.hpp"
#include "fusor/mpi/transport.hpp"

namespace fusor {

/// How partitioned_shared splits a global array.
struct partition_options {
  std::size_t axis = 0;   ///< the axis split across the processes
  std::size_t ghost = 1;  ///< ghost cells on either side of a slab: the stencil's reach
  std::string name;       ///< the local variable's name (and the entry's, when saved as .npz)
};

/// Where one process's slab lies in the global array, along the partitioned
/// axis (global indices; see the file comment for the split).
struct partition {
  std::size_t axis = 0, ghost = 1;
  std::size_t extent = 0;  ///< the global array's length along the axis
  int processes = 1, rank = 0;
  std::size_t begin = 0, end = 0;              ///< the slab, ghosts included: [begin, end)
  std::size_t owned_begin = 0, owned_end = 0;  ///< the cells this process owns: [owned_begin, owned_end)

  std::size_t length() const noexcept { return end - begin; }

  /// The slab of process `rank` of `processes`, for an axis of length
  /// `extent`. A fusor::value_error where a process would own fewer than
  /// `ghost` interior cells (its neighbours' ghosts would reach past it).
  static partition of(std::size_t extent, int processes, int rank, std::size_t axis, std::size_t ghost) {
    if (processes < 1 || rank < 0 || rank >= processes)
      throw value_error("fusor::partition: expected 0 <= rank < processes, received rank " + std::to_string(rank) +
                        " of " + std::to_string(processes));
    partition p;
    p.axis = axis;
    p.ghost = ghost;
    p.extent = extent;
    p.processes = processes;
    p.rank = rank;
    if (processes == 1) {
      p.end = p.owned_end = extent;
      return p;
    }
    const auto np = static_cast<std::size_t>(processes), r = static_cast<std::size_t>(rank);
    if (ghost == 0 || extent < 2 * ghost || (extent - 2 * ghost) / np < ghost)
      throw value_error("fusor::partitioned_shared: an axis of length " + std::to_string(extent) +
                        " cannot be split across " + std::to_string(processes) + " processes with " +
                        std::to_string(ghost) + " ghost cell(s) on either side: expected a ghost width of at least 1 "
                        "and a length of at least " + std::to_string(2 * ghost + np * std::max<std::size_t>(ghost, 1)) +
                        " (each process owns at least as many interior cells as its neighbours read)");
    const std::size_t interior = extent - 2 * ghost, base = interior / np, extra = interior % np;
    const std::size_t first = ghost + r * base + std::min(r, extra), last = first + base + (r < extra ? 1 : 0);
    p.begin = first - ghost;
    p.end = last + ghost;
    p.owned_begin = rank == 0 ? 0 : first;
    p.owned_end = rank == processes - 1 ? extent : last;
    return p;
  }
};

namespace mpi_detail {

/// A C-order array's extents around one axis: `outer` blocks (the axes
/// before it) of `length` cells (the axis) of `inner` elements each (the
/// axes after it).
struct axis_split {
  std::size_t outer = 1, length = 0, inner = 1;
  axis_split(const dims& shape, std::size_t axis) {
    for (std::size_t d = 0; d < axis; ++d) outer *= shape[d];
    length = shape[axis];
    for (std::size_t d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
  }
};

/// Copies cells [from, from + count) along the axis of an array split as
/// `s` (element size `esize`) to cells [to, to + count) of one split as `d`.
inline void copy_cells(const std::byte* src, const axis_split& s, std::size_t from, std::byte* dest,
                       const axis_split& d, std::size_t to, std::size_t count, std::size_t esize) {
  const std::size_t run = count * s.inner * esize;
  if (run == 0) return;
  for (std::size_t o = 0; o < s.outer; ++o)
    std::memcpy(dest + ((o * d.length + to) * d.inner) * esize, src + ((o * s.length + from) * s.inner) * esize, run);
}

/// The halo exchange of a partitioned variable (expr/collective.hpp's
/// operation; see the file comment).
class halo_op final : public mpi_collective {
 public:
  halo_op(MPI_Comm comm, std::size_t axis, std::size_t ghost)
      : mpi_collective(comm, "fusor::halo"), axis_(axis), ghost_(ghost) {}
  halo_op(const halo_op&) = delete;
  halo_op& operator=(const halo_op&) = delete;
  ~halo_op() override {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised)  // after MPI_Finalize, MPI has freed them itself
      for (vector_type& v : types_) MPI_Type_free(&v.type);
  }

  std::string text(std::string_view operand) const override {
    return "halo(" + std::string(operand) + ", axis " + std::to_string(axis_) + ", ghost " + std::to_string(ghost_) +
           ")";
  }
  void append_params(std::vector<std::uint64_t>& key) const override {
    key.push_back(group());
    key.push_back(0x68616c6fu);  // "halo": never an allreduce's operation
    key.push_back(axis_);
    key.push_back(ghost_);
  }
  bool same_extent_everywhere(std::size_t axis) const override { return axis != axis_; }
  bool over_variable() const override { return true; }
  void check_shape(const dims& shape) const override {
    const std::size_t need = size_ > 1 ? 3 * ghost_ : 0;
    if (shape.rank() <= axis_ || shape[axis_] < need)
      throw shape_error("fusor::halo: expected a slab of rank above " + std::to_string(axis_) + " with at least " +
                        std::to_string(need) + " cells along axis " + std::to_string(axis_) + " (its ghosts and " +
                        "as many owned cells), received shape " + shape.str());
  }
  void run(const void* src, void* dest, const dims& shape, dtype t) const override {
    const std::size_t esize = size_of(t);
    if (src != dest) std::memcpy(dest, src, shape.elements() * esize);
    if (size_ == 1) return;
    const axis_split s(shape, axis_);
    // One ghost block: `outer` runs of ghost * inner elements, length * inner apart.
    const std::size_t run = ghost_ * s.inner;
    if (run > INT_MAX || s.outer > INT_MAX || s.length * s.inner > INT_MAX)
      throw value_error("fusor::halo: a ghost block of " + std::to_string(s.outer) + " x " + std::to_string(run) +
                        " elements is beyond MPI's int counts");
    const block_type type = block_of(datatype(t, who_), s, run);
    auto* d = static_cast<std::byte*>(dest);
    auto at = [&](std::size_t cell) { return d + cell * s.inner * esize; };
    const int up = rank_ > 0 ? rank_ - 1 : MPI_PROC_NULL, down = rank_ + 1 < size_ ? rank_ + 1 : MPI_PROC_NULL;
    const std::size_t L = s.length, g = ghost_;
    // A block sent to the previous process is tagged 0, one sent to the next 1.
    MPI_Request r[4];
    check(MPI_Irecv(at(0), type.count, type.type, up, 1, comm_, &r[0]), "MPI_Irecv");
    check(MPI_Irecv(at(L - g), type.count, type.type, down, 0, comm_, &r[1]), "MPI_Irecv");
    check(MPI_Isend(at(g), type.count, type.type, up, 0, comm_, &r[2]), "MPI_Isend");
    check(MPI_Isend(at(L - 2 * g), type.count, type.type, down, 1, comm_, &r[3]), "MPI_Isend");
    check(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  std::shared_ptr<const collective_op> adjoint() const override {
    throw value_error("fusor::grad: a halo exchange has no gradient here (differentiate the stencil on one process, "
                      "or write its adjoint's exchange by hand)");
  }

 private:
  /// One ghost block as MPI moves it: the element type itself, `run` times,
  /// along the first axis; along another, one vector datatype, made the first
  /// time a shape is exchanged and kept for the operation's life (a steady
  /// call makes none).
  struct block_type {
    MPI_Datatype type;
    int count;
  };
  struct vector_type {
    std::size_t outer, run, stride;
    MPI_Datatype element, type;
  };
  block_type block_of(MPI_Datatype element, const axis_split& s, std::size_t run) const {
    if (s.outer == 1) return {element, static_cast<int>(run)};
    const std::size_t stride = s.length * s.inner;
    const std::lock_guard<std::mutex> lock(types_mutex_);
    for (const vector_type& v : types_)
      if (v.outer == s.outer && v.run == run && v.stride == stride && v.element == element) return {v.type, 1};
    MPI_Datatype type;
    check(MPI_Type_vector(static_cast<int>(s.outer), static_cast<int>(run), static_cast<int>(stride), element, &type),
          "MPI_Type_vector");
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    types_.push_back({s.outer, run, stride, element, type});
    return {type, 1};
  }

  mutable std::mutex types_mutex_;
  mutable std::vector<vector_type> types_;
  std::size_t axis_, ghost_;
};

}  // namespace mpi_detail

/// A shared variable split across the processes of a communicator (see the
/// file comment): this process's slab, ghosts included, as an ordinary
/// shared variable, with how it was split and the exchange of its ghosts.
template <class T>
class partitioned {
 public:
  using element_type = element_type_of<T>;

  partitioned(shared<T> local, partition layout, MPI_Comm comm)
      : local_(FUSOR_MOVE(local)),
        layout_(layout),
        halo_(std::make_shared<mpi_detail::halo_op>(comm, layout.axis, layout.ghost)) {}

  /// This process's slab: read it, update it, save it as any shared variable.
  shared<T>& local() noexcept { return local_; }
  const shared<T>& local() const noexcept { return local_; }
  /// Where the slab lies in the global array.
  const partition& layout() const noexcept { return layout_; }
  MPI_Comm comm() const noexcept { return halo_->comm(); }

  /// The slab with its ghost cells received from the neighbouring processes:
  /// an expression (a communication step in the plan).
  [[nodiscard]] auto halo() const {
    using A = as_expression_t<const shared<T>&>;
    return collective_node<A>(A(local_), halo_);
  }

  /// The whole array on process `root` (the cells each process owns, from
  /// each); elsewhere an empty array. Every process of the communicator calls it.
  T gather(int root = 0) const { return gather_to(root); }
  /// The whole array on every process.
  T gather_all() const { return gather_to(-1); }

  /// Saves the whole array from process `root`: one .npz (an entry named
  /// after the variable) where `file` ends in .npz, else one .npy. Every
  /// process calls it, and every process throws if the root could not write.
  void save(const std::filesystem::path& file, int root = 0) const {
    T all = gather(root);
    std::string failure;
    if (layout_.rank == root) {
      try {
        const std::string nm = local_.name().empty() ? std::string("array") : local_.name();
        shared<T> whole(all, shared_options{.name = nm});
        if (file.extension() == ".npz") fusor::save(file, whole);
        else fusor::save(whole, file);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    // Every process learns whether the root wrote the file.
    int length = static_cast<int>(failure.size());
    mpi_detail::check(MPI_Bcast(&length, 1, MPI_INT, root, comm()), "fusor::partitioned::save", "MPI_Bcast");
    if (length == 0) return;
    failure.resize(static_cast<std::size_t>(length));
    mpi_detail::check(MPI_Bcast(failure.data(), length, MPI_CHAR, root, comm()), "fusor::partitioned::save",
                      "MPI_Bcast");
    throw error("fusor::partitioned::save: process " + std::to_string(root) + " could not write " +
                detail::quoted(file) + ": " + failure);
  }

 private:
  /// The slab's shape, checked on every process against the others' (the
  /// same rank and extents but along the axis) and against the layout.
  dims checked_shape(const T& slab) const {
    const dims shape = dims::from(slab.shape());
    std::vector<std::int64_t> mine(max_rank + 2, -1), all(mine.size() * static_cast<std::size_t>(layout_.processes));
    mine[0] = static_cast<std::int64_t>(shape.rank());
    mine[1] = shape.rank() > layout_.axis && shape[layout_.axis] == layout_.length() ? 1 : 0;
    for (std::size_t d = 0; d < shape.rank(); ++d)
      mine[d + 2] = d == layout_.axis ? -1 : static_cast<std::int64_t>(shape[d]);
    mpi_detail::check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                                    static_cast<int>(mine.size()), MPI_INT64_T, comm()),
                      "fusor::partitioned::gather", "MPI_Allgather");
    for (int p = 0; p < layout_.processes; ++p) {
      const auto* theirs = all.data() + static_cast<std::size_t>(p) * mine.size();
      if (theirs[1] == 1 && std::equal(mine.begin() + 2, mine.end(), theirs + 2) && theirs[0] == mine[0]) continue;
      throw shape_error("fusor::partitioned::gather: expected every process's slab of the shape it was split "
                        "with, equal but along axis " + std::to_string(layout_.axis) + "; process " +
                        std::to_string(p) + "'s slab differs (this process's: " + shape.str() + ")");
    }
    return shape;
  }

  T gather_to(int root) const {
    const T slab = local_.get_value();
    const dims shape = checked_shape(slab);
    const std::size_t esize = sizeof(element_type);
    const mpi_detail::axis_split s(shape, layout_.axis);
    // Each process sends its owned cells, packed: outer x owned x inner.
    const std::size_t owned = layout_.owned_end - layout_.owned_begin;
    std::vector<std::byte> mine(s.outer * owned * s.inner * esize);
    mpi_detail::copy_cells(reinterpret_cast<const std::byte*>(slab.data()), s, layout_.owned_begin - layout_.begin,
                           mine.data(), mpi_detail::axis_split(with_length(shape, owned), layout_.axis), 0, owned,
                           esize);
    std::vector<partition> parts;  // every process's
    for (int p = 0; p < layout_.processes; ++p)
      parts.push_back(partition::of(layout_.extent, layout_.processes, p, layout_.axis, layout_.ghost));
    std::vector<int> counts(parts.size()), offsets(parts.size());
    std::size_t total = 0;
    for (int p = 0; p < layout_.processes; ++p) {
      const partition& q = parts[static_cast<std::size_t>(p)];
      const std::size_t bytes = s.outer * (q.owned_end - q.owned_begin) * s.inner * esize;
      if (total + bytes > INT_MAX)
        throw value_error("fusor::partitioned::gather: the whole array's " + std::to_string(total + bytes) +
                          " bytes are beyond MPI's int counts");
      counts[static_cast<std::size_t>(p)] = static_cast<int>(bytes);
      offsets[static_cast<std::size_t>(p)] = static_cast<int>(total);
      total += bytes;
    }
    const bool receives = root < 0 || root == layout_.rank;
    std::vector<std::byte> packed(receives ? total : 0);
    const char* who = "fusor::partitioned::gather";
    if (root < 0)
      mpi_detail::check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, packed.data(),
                                       counts.data(), offsets.data(), MPI_BYTE, comm()),
                        who, "MPI_Allgatherv");
    else
      mpi_detail::check(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, packed.data(), counts.data(),
                                    offsets.data(), MPI_BYTE, root, comm()),
                        who, "MPI_Gatherv");
    if (!receives) return T{};
    const dims global = with_length(shape, layout_.extent);
    T all = T::from_shape(std::vector<std::size_t>(global.begin(), global.end()));
    const mpi_detail::axis_split a(global, layout_.axis);
    for (int p = 0; p < layout_.processes; ++p) {
      const partition& q = parts[static_cast<std::size_t>(p)];
      const std::size_t n = q.owned_end - q.owned_begin;
      mpi_detail::copy_cells(packed.data() + offsets[static_cast<std::size_t>(p)],
                             mpi_detail::axis_split(with_length(shape, n), layout_.axis), 0,
                             reinterpret_cast<std::byte*>(all.data()), a, q.owned_begin, n, esize);
    }
    return all;
  }

  dims with_length(dims shape, std::size_t n) const {
    shape[layout_.axis] = n;
    return shape;
  }

  shared<T> local_;
  partition layout_;
  std::shared_ptr<const mpi_detail::halo_op> halo_;
};

/// Splits `global` (the same array on every process of `comm`) along
/// options.axis: each process keeps its slab, ghosts included, in a new
/// shared variable (see the file comment). Every process of comm calls it.
template <class T>
  requires tensor_shareable<T>
partitioned<T> partitioned_shared(const T& global, MPI_Comm comm, partition_options options = {}) {
  const auto [size, rank] = mpi_detail::place_in(comm, "fusor::partitioned_shared");
  const dims shape = dims::from(global.shape());
  if (options.axis >= shape.rank())
    throw value_error("fusor::partitioned_shared: expected an axis below the array's rank " +
                      std::to_string(shape.rank()) + ", received axis " + std::to_string(options.axis));
  const partition layout = partition::of(shape[options.axis], size, rank, options.axis, options.ghost);
  dims local_shape = shape;
  local_shape[options.axis] = layout.length();
  T slab = T::from_shape(std::vector<std::size_t>(local_shape.begin(), local_shape.end()));
  using E = element_type_of<T>;
  mpi_detail::copy_cells(reinterpret_cast<const std::byte*>(global.data()), mpi_detail::axis_split(shape, options.axis),
                         layout.begin, reinterpret_cast<std::byte*>(slab.data()),
                         mpi_detail::axis_split(local_shape, options.axis), 0, layout.length(), sizeof(E));
  return partitioned<T>(shared<T>(slab, shared_options{.name = options.name}), layout, comm);
}

}  // namespace fusor
