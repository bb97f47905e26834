// fusor/backend/gpu/impl/steps.ipp — the device's steps that depend on no node type:
// copies of boxes, joins assembled, take's gather and scatter, collectives.
// Only the backend's prepare_one (impl/backend.ipp) makes them, so they are
// part of the run-time half: compiled once into libfusor under
// FUSOR_SEPARATE_COMPILATION, and never parsed by a unit that includes the headers.
#pragma once

#include "fusor/backend/gpu/kernels.hpp"
#include "fusor/compile/collective_step.hpp"
#include "fusor/compile/gather.hpp"
#include "fusor/compile/moves.hpp"
#include "fusor/compile/region.hpp"

namespace fusor::gpu {

// ---------------------------------------------------------------- copies of boxes

/// The rest of a variable copied into the spare buffer of an update of a
/// view (compile/region.hpp): one 2-D device copy per plane of a box. Always
/// copied (unlike the host's, which skips a copy ping-pong buffers make
/// unneeded): a captured graph replays what it recorded, whatever changed.
struct copy_boxes_step final : prepared_step {
  fusor::detail::box_copy copy;
  void run(void* const* slots, const context& ctx) override {
    const auto* src = static_cast<const std::byte*>(slots[copy.from]);
    auto* dst = static_cast<std::byte*>(slots[copy.to]);
    const std::size_t e = copy.element_bytes;
    for (const box& b : copy.boxes)
      fusor::detail::for_each_plane(b, copy.full, [&](index_t offset, index_t pitch, index_t width, index_t height) {
        const auto at = static_cast<std::size_t>(offset) * e;
        ctx.runtime->copy_2d(ctx.device, dst + at, static_cast<std::size_t>(pitch) * e, src + at,
                             static_cast<std::size_t>(pitch) * e, static_cast<std::size_t>(width) * e,
                             static_cast<std::size_t>(height));
      });
  }
  static std::unique_ptr<prepared_step> prepare(const graph&, const plan& p, const step_info& s) {
    auto st = std::make_unique<copy_boxes_step>();
    st->copy = fusor::detail::box_copy_of(p, s);
    return st;
  }
};

// ---------------------------------------------------------------- assembling joins

/// A join's parts moved into its temporary (concatenate, roll, pad) by the
/// device runtime's strided move.
struct assemble_step final : prepared_step {
  fusor::detail::assembly parts;
  void run(void* const* slots, const context& ctx) override {
    for (const auto& m : parts.moves)
      ctx.runtime->move_strided(ctx.device, slots[parts.to], m.from >= 0 ? slots[m.from] : nullptr, &m.fill, m.view,
                                parts.element_bytes);
  }
  static std::unique_ptr<prepared_step> prepare(const plan& p, const step_info& s) {
    auto st = std::make_unique<assemble_step>();
    st->parts = fusor::detail::assembly_of(p, s);
    return st;
  }
};

// ---------------------------------------------------------------- gathering (take)

/// take on a device: the indices are copied to the host and checked (the
/// step waits for them: it is not captured into graphs), then each selected
/// block is moved on the device — one copy per block. (A device-side gather
/// kernel would make it one launch.)
struct gather_step final : prepared_step {
  int from = -1, index_slot = -1, to = -1;
  fusor::detail::gather_layout layout;
  std::vector<std::int64_t> indices;
  std::vector<std::byte> staging;  ///< the index slot, on the host
  bool capturable() const override { return false; }
  void run(void* const* slots, const context& ctx) override {
    if (!staging.empty()) copy_bytes(staging.data(), host, slots[index_slot], ctx.space, staging.size());
    fusor::detail::read_indices(layout, staging.data(), indices);
    auto* src = static_cast<const std::byte*>(slots[from]);
    auto* dst = static_cast<std::byte*>(slots[to]);
    const std::size_t e = layout.element_bytes;
    fusor::detail::for_each_block(layout, indices, [&](index_t d, index_t s) {
      strided_view v = layout.block;
      v.dst_offset = d;
      v.src_offset = s;
      ctx.runtime->move_strided(ctx.device, dst, src, nullptr, v, e);
    });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<gather_step>();
    st->from = s.reads[0];
    st->index_slot = s.reads[1];
    st->to = s.dest;
    st->layout = fusor::detail::make_gather_layout(g, p, s);
    st->indices.resize(st->layout.index_count);
    st->staging.resize(st->layout.index_slot_bytes);
    return st;
  }
};

// ---------------------------------------------------------------- scattering (the gradient of take)

/// The gradient of take on a device: the indices are copied to the host and
/// checked (as for take: the step is not captured into graphs), the
/// destination is zeroed, then each block of the adjoint is added to the
/// block its index names — one launch per block, in index order, so an index
/// named twice receives both without atomics. (One launch with atomics, or a
/// sort by index, would be faster for many small blocks.)
struct scatter_step final : prepared_step {
  fusor::detail::scatter_layout layout;
  std::vector<std::int64_t> indices;
  std::vector<std::byte> staging;  ///< the index slot, on the host
  bool capturable() const override { return false; }
  void run(void* const* slots, const context& ctx) override {
    if (!staging.empty()) copy_bytes(staging.data(), host, slots[layout.index_slot], ctx.space, staging.size());
    fusor::detail::read_indices(layout.blocks, staging.data(), indices);
    ctx.runtime->zero(ctx.device, slots[layout.dest], layout.dest_bytes);
    const auto* src = static_cast<const std::byte*>(slots[layout.source]);
    auto* dst = static_cast<std::byte*>(slots[layout.dest]);
    const std::size_t e = layout.blocks.element_bytes;
    const auto n = static_cast<std::size_t>(layout.blocks.block_elements);
    fusor::detail::for_each_block(layout.blocks, indices, [&](index_t from, index_t to) {
      ctx.runtime->accumulate(ctx.device, layout.type, dst + static_cast<std::size_t>(to) * e,
                              src + static_cast<std::size_t>(layout.source_offset + from) * e, n);
    });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    auto st = std::make_unique<scatter_step>();
    st->layout = fusor::detail::make_scatter_layout(g, p, s);
    st->indices.resize(st->layout.blocks.index_count);
    st->staging.resize(st->layout.blocks.index_slot_bytes);
    return st;
  }
};

/// A collective (expr/collective.hpp) on a device's memory, staged through
/// host buffers (sized when prepared: a call allocates nothing): the
/// operand copied to the host, combined there by the transport, copied back.
/// (A transport that reads device memory itself — NCCL, a CUDA-aware MPI —
/// would skip both copies; see the docs on multi-process use.)
struct communicate_step final : prepared_step {
  fusor::detail::collective_message message;
  bool capturable() const override { return false; }
  void run(void* const* slots, const context& ctx) override {
    message.run(
        slots, [&](std::byte* to, int slot, std::size_t n) { copy_bytes(to, host, slots[slot], ctx.space, n); },
        [&](int slot, const std::byte* from, std::size_t n) { copy_bytes(slots[slot], ctx.space, from, host, n); });
  }
  static std::unique_ptr<prepared_step> prepare(const graph& g, const plan& p, const step_info& s) {
    if (s.message_steps == 0) return nullptr;  // carried by an earlier step's message
    auto st = std::make_unique<communicate_step>();
    st->message = fusor::detail::prepare_message(g, p, s, true);
    return st;
  }
};

}  // namespace fusor::gpu
