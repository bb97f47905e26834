// fusor/compile/region.hpp — what an update of a view leaves alone.
//
// `update(view(u, range(1, -1)), e)` writes e into part of u; the rest of u
// keeps its value. When the update cannot be written into u's buffer (e reads
// u shifted: a stencil), it is written into a spare buffer, and the rest of u
// — the complement of the region — is copied there first, as boxes: at most
// two per axis when every range steps by ±1 (for a 512 × 512 stencil interior,
// two rows and two columns). A region with larger steps is not a union of few
// boxes: then the whole variable is copied and the region written over it.
// Both backends copy boxes plane by plane (a 2-D copy of rows: memcpy per row
// on the host, one cudaMemcpy2D on a device).
#pragma once

#include <array>
#include <cstdlib>
#include <vector>

#include "fusor/core/dims.hpp"
#include "fusor/shared/variable.hpp"

namespace fusor {

/// The elements [start[d], start[d] + shape[d]) on every axis d of a
/// contiguous array.
struct box {
  std::array<index_t, max_rank> start{};
  dims shape;
};

namespace detail {

/// A view resolved against its operand's shape (detail::resolve_view in
/// compile/shapes.hpp): its shape, its element strides and the offset of its
/// first element.
struct resolved_view {
  dims shape;
  std::array<index_t, max_rank> strides{};
  index_t offset = 0;
  /// Per operand axis: the first index read, how many, and the step (an
  /// integer index reads one; an axis not named reads all with step 1).
  std::array<index_t, max_rank> first{}, count{}, step{};
};

/// The boxes covering every element of an array of shape `full` outside the
/// region `r` (resolved over `full`); see the file comment.
inline std::vector<box> complement_boxes(const dims& full, const resolved_view& r) {
  std::vector<box> out;
  if (full.elements() == 0) return out;
  const std::size_t rank = full.rank();
  bool simple = true, empty = false;
  std::array<index_t, max_rank> lo{}, hi{};
  for (std::size_t d = 0; d < rank; ++d) {
    if (r.count[d] == 0) empty = true;
    if (r.count[d] > 1 && std::abs(r.step[d]) != 1) simple = false;
    lo[d] = r.step[d] > 0 ? r.first[d] : r.first[d] - (r.count[d] - 1);
    hi[d] = lo[d] + r.count[d];
  }
  if (!simple || empty) {
    box all;
    all.shape = full;
    out.push_back(all);
    return out;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    auto side = [&](index_t from, index_t to) {
      if (to <= from) return;
      box b;
      for (std::size_t a = 0; a < rank; ++a) {
        if (a < d) {
          b.start[a] = lo[a];
          b.shape.push_back(static_cast<std::size_t>(hi[a] - lo[a]));
        } else if (a == d) {
          b.start[a] = from;
          b.shape.push_back(static_cast<std::size_t>(to - from));
        } else {
          b.shape.push_back(full[a]);
        }
      }
      out.push_back(b);
    };
    side(0, lo[d]);
    side(hi[d], static_cast<index_t>(full[d]));
  }
  return out;
}

/// Calls f(offset, pitch, width, height), in elements, for every plane of box
/// `b` of a contiguous array of shape `full`: `height` rows of `width`
/// contiguous elements, `pitch` apart, the first at `offset`.
template <class F>
void for_each_plane(const box& b, const dims& full, F&& f) {
  const std::size_t rank = full.rank();
  if (b.shape.elements() == 0) return;
  if (rank == 0) return f(index_t{0}, index_t{0}, index_t{1}, index_t{1});
  const auto strides = c_strides(full);
  const auto width = static_cast<index_t>(b.shape[rank - 1]);
  if (rank == 1) return f(b.start[0], width, width, index_t{1});
  const index_t pitch = strides[rank - 2];
  const auto height = static_cast<index_t>(b.shape[rank - 2]);
  std::array<index_t, max_rank> i{};  // odometer over the axes before the plane
  const std::size_t outer = rank - 2;
  while (true) {
    index_t offset = b.start[rank - 2] * pitch + b.start[rank - 1];
    for (std::size_t d = 0; d < outer; ++d) offset += (b.start[d] + i[d]) * strides[d];
    f(offset, pitch, width, height);
    std::size_t d = outer;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++i[d] < static_cast<index_t>(b.shape[d])) break;
      i[d] = 0;
    }
  }
}

/// Calls f(i, offset) for every element i (row-major) of a view: `offset`
/// is its position in the view's slot, in elements.
template <class View, class F>
void for_each_strided(const View& v, F&& f) {
  const std::size_t n = v.shape.elements(), rank = v.shape.rank();
  std::array<index_t, max_rank> at{};
  for (std::size_t i = 0; i < n; ++i) {
    index_t off = v.offset;
    for (std::size_t d = 0; d < rank; ++d) off += at[d] * v.strides[d];
    f(i, off);
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < static_cast<index_t>(v.shape[d])) break;
      at[d] = 0;
    }
  }
}

/// Whether the rest of a variable must be copied into the spare buffer again.
/// Not when the spare is the buffer the last copy read from, the variable's
/// buffer the one it wrote, and nothing has written the variable since but
/// the install that followed: ping-pong buffers then already agree outside
/// the region (a Jacobi step copies its border once, not at every step).
/// The spare must be that very buffer, kept since, not a new one that the
/// allocator placed where it was after it was freed: a caller handing a new
/// spare calls forget() (through fusor::prepared_plan::spares_replaced).
struct rest_tracker {
  const variable_base* record = nullptr;
  const void* last_from = nullptr;
  const void* last_to = nullptr;
  std::uint64_t generation = 0;

  bool needed(const void* from, const void* to) const noexcept {
    return !(record && from == last_to && to == last_from && record->generation() == generation + 1);
  }
  /// After the copy (made or found unneeded): what the buffers now hold.
  void copied(const void* from, const void* to) noexcept {
    last_from = from;
    last_to = to;
    generation = record ? record->generation() : 0;
  }
  /// The next spare is a new buffer: nothing is known of its contents.
  void forget() noexcept {
    last_from = nullptr;
    last_to = nullptr;
  }
};

}  // namespace detail
}  // namespace fusor
