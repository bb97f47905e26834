// fusor/backend/cpu/impl/steps.ipp — the host's steps that depend on no node type:
// copies of boxes, joins assembled, take's gather and scatter, collectives.
// Only the backend's prepare_one (impl/backend.ipp) makes them, so they are
// part of the run-time half: compiled once into libfusor under
// FUSOR_SEPARATE_COMPILATION, and never parsed by a unit that includes the headers.
#pragma once

#include "fusor/backend/cpu/kernels.hpp"
#include "fusor/compile/collective_step.hpp"
#include "fusor/compile/gather.hpp"
#include "fusor/compile/moves.hpp"
#include "fusor/compile/region.hpp"

namespace fusor::cpu {

// ---------------------------------------------------------------- copies of boxes

/// The rest of a variable copied into the spare buffer of an update of a
/// view (compile/region.hpp): any dtype, row by row — and not again while
/// ping-pong buffers already agree there (detail::rest_tracker).
struct copy_boxes_step final : prepared_step {
  fusor::detail::box_copy copy;
  fusor::detail::rest_tracker rest;
  void do_run(void* const* slots) override {
    const auto* src = static_cast<const std::byte*>(slots[copy.from]);
    auto* dst = static_cast<std::byte*>(slots[copy.to]);
    const std::size_t e = copy.element_bytes;
    const bool needed = rest.needed(src, dst);
    rest.copied(src, dst);
    if (!needed) return;
    for (const box& b : copy.boxes)
      fusor::detail::for_each_plane(b, copy.full, [&](index_t offset, index_t pitch, index_t width, index_t height) {
        for (index_t r = 0; r < height; ++r) {
          const auto at = static_cast<std::size_t>(offset + r * pitch) * e;
          std::memcpy(dst + at, src + at, static_cast<std::size_t>(width) * e);
        }
      });
  }
  void spares_replaced() noexcept override { rest.forget(); }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<copy_boxes_step>();
    st->rest.record = g.shared[static_cast<std::size_t>(g.updates[static_cast<std::size_t>(s.target)].variable)].record;
    st->copy = fusor::detail::box_copy_of(p, s);
    return st;
  }
};

// ---------------------------------------------------------------- assembling joins

/// A join's parts moved into its temporary (concatenate, roll, pad): any
/// dtype, element by element through the views the plan computed.
struct assemble_step final : prepared_step {
  fusor::detail::assembly parts;
  void do_run(void* const* slots) override {
    for (const auto& m : parts.moves)
      fusor::detail::move_strided_host(slots[parts.to], m.from >= 0 ? slots[m.from] : nullptr, &m.fill, m.view, parts.element_bytes);
  }
  static std::unique_ptr<prepared_step> prepare(const plan& p, const step_info& s) {
    auto st = std::make_unique<assemble_step>();
    st->parts = fusor::detail::assembly_of(p, s);
    return st;
  }
};

// ---------------------------------------------------------------- gathering (take)

/// take: the indices are read and checked first (nothing is written before),
/// then each selected block is copied — a memcpy where it is contiguous.
struct gather_step final : prepared_step {
  int from = -1, index_slot = -1, to = -1;
  fusor::detail::gather_layout layout;
  std::vector<std::int64_t> indices;  ///< sized when prepared: a call allocates nothing
  void do_run(void* const* slots) override {
    fusor::detail::read_indices(layout, slots[index_slot], indices);
    const auto* src = static_cast<const std::byte*>(slots[from]);
    auto* dst = static_cast<std::byte*>(slots[to]);
    const std::size_t e = layout.element_bytes;
    fusor::detail::for_each_block(layout, indices, [&](index_t d, index_t s) {
      if (layout.block_contiguous) {
        std::memcpy(dst + static_cast<std::size_t>(d) * e, src + static_cast<std::size_t>(s) * e,
                    static_cast<std::size_t>(layout.block_elements) * e);
      } else {
        strided_view v = layout.block;
        v.dst_offset = d;
        v.src_offset = s;
        fusor::detail::move_strided_host(dst, src, nullptr, v, e);
      }
    });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<gather_step>();
    st->from = s.reads[0];
    st->index_slot = s.reads[1];
    st->to = s.dest;
    st->layout = fusor::detail::make_gather_layout(g, p, s);
    st->indices.resize(st->layout.index_count);
    return st;
  }
};

// ---------------------------------------------------------------- communication

/// A collective (expr/collective.hpp): the transport reads and writes the
/// slots themselves (several fused into one message: packed first).
struct communicate_step final : prepared_step {
  fusor::detail::collective_message message;
  void do_run(void* const* slots) override {
    message.run(
        slots, [&](std::byte* to, int slot, std::size_t n) { std::memcpy(to, slots[slot], n); },
        [&](int slot, const std::byte* from, std::size_t n) { std::memcpy(slots[slot], from, n); });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    if (s.message_steps == 0) return nullptr;  // carried by an earlier step's message
    auto st = std::make_unique<communicate_step>();
    st->message = fusor::detail::prepare_message(g, p, s, false);
    return st;
  }
};

// ---------------------------------------------------------------- scattering (the gradient of take)

/// The gradient of take: the destination zeroed, then each block of the
/// adjoint added to the block of the destination its index names, in index
/// order (an index named twice receives both). Indices are checked first.
struct scatter_step final : prepared_step {
  fusor::detail::scatter_layout layout;
  std::vector<std::int64_t> indices;  ///< sized when prepared: a call allocates nothing
  void do_run(void* const* slots) override {
    fusor::detail::read_indices(layout.blocks, slots[layout.index_slot], indices);
    std::memset(slots[layout.dest], 0, layout.dest_bytes);
    visit(layout.type, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>) {
        const T* src = static_cast<const T*>(slots[layout.source]) + layout.source_offset;
        T* dst = static_cast<T*>(slots[layout.dest]);
        const index_t n = layout.blocks.block_elements;
        fusor::detail::for_each_block(layout.blocks, indices, [&](index_t from, index_t to) {
          for (index_t i = 0; i < n; ++i) dst[to + i] += src[from + i];
        });
      }
    });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<scatter_step>();
    st->layout = fusor::detail::make_scatter_layout(g, p, s);
    if (!is_floating(st->layout.type))
      throw error("fusor: internal error: " + st->layout.blocks.what + ": a scatter of a non-floating dtype");
    st->indices.resize(st->layout.blocks.index_count);
    return st;
  }
};

}  // namespace fusor::cpu
