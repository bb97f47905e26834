// fusor/backend/cpu/workspace.hpp — where an evaluation puts its temporaries.
//
// A slot arena: the i-th temporary requested in an evaluation reuses the i-th
// buffer of the previous evaluation when it is large enough. A compiled
// function replays the same sequence on every call with the same shapes, so
// after the first call it allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "fusor/compile/profile.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/expr/visit.hpp"
#include "fusor/memory/buffer.hpp"

namespace fusor::cpu {

class workspace {
 public:
  workspace() = default;

  /// Starts a new evaluation: slots are handed out again from the first.
  void reset() noexcept {
    next_ = next_high_ = 0;
    memo_count_ = 0;
  }

  /// Uninitialised, 64-byte-aligned storage for `n` elements of E.
  template <class E>
  E* allocate(std::size_t n) {
    if (n > max_array_bytes / sizeof(E))
      throw shape_error("fusor: a temporary of " + std::to_string(n) + " elements of " + std::to_string(sizeof(E)) +
                        " bytes is too large: its size in bytes overflows a signed 64-bit integer");
    const std::size_t bytes = n * sizeof(E);
    if (next_ == slots_.size()) {
      slots_.push_back(buffer::allocate(bytes));
      ++allocations_;
    } else if (slots_[next_].bytes() < bytes) {
      slots_[next_] = buffer::allocate(bytes);
      ++allocations_;
    }
    E* p = reinterpret_cast<E*>(slots_[next_++].data());
    if (next_ > next_high_) next_high_ = next_;
    return p;
  }

  /// Liveness at the granularity of a kernel group: temporaries allocated after
  /// mark() are dead after release(m), and their slots are handed out again.
  std::size_t mark() const noexcept { return next_; }
  void release(std::size_t m) noexcept {
    next_ = m;
    // Remembered results that lived in released slots are gone.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < memo_count_; ++i)
      if (memo_[i].slot < m) memo_[kept++] = memo_[i];
    memo_count_ = kept;
  }

  /// A result computed earlier in this evaluation (a dot, a reduction) for
  /// the same tokens, so that `dot(x, w)` used by three outputs is computed
  /// once. Returns nullptr when there is none.
  struct remembered {
    token_sink tokens;
    std::size_t slot = 0;
    const void* data = nullptr;
    dims shape;
  };
  const remembered* recall(const token_sink& t) const noexcept {
    if (t.overflow) return nullptr;
    for (std::size_t i = 0; i < memo_count_; ++i)
      if (memo_[i].tokens == t) return &memo_[i];
    return nullptr;
  }
  /// Where the kernels run while lowering (dot, reductions, materialised
  /// temporaries) report their time, when the caller profiles; null otherwise.
  profile_report* profile = nullptr;

  /// Remembers that the slot handed out at index `slot` holds the result.
  void remember(const token_sink& t, std::size_t slot, const void* data, const dims& shape) noexcept {
    if (t.overflow || memo_count_ == memo_.size()) return;
    memo_[memo_count_++] = remembered{t, slot, data, shape};
  }

  /// Bytes of the slots handed out since reset() (the temporaries of a call).
  std::size_t bytes_in_use() const noexcept {
    std::size_t total = 0;
    for (std::size_t i = 0; i < next_high_; ++i) total += slots_[i].bytes();
    return total;
  }

  /// Bytes held across evaluations.
  std::size_t bytes() const noexcept {
    std::size_t total = 0;
    for (const auto& s : slots_) total += s.bytes();
    return total;
  }
  /// Buffers allocated since construction (a steady state adds none).
  std::size_t allocations() const noexcept { return allocations_; }
  std::size_t slots_used() const noexcept { return next_; }

 private:
  std::vector<buffer> slots_;
  std::array<remembered, 8> memo_{};
  std::size_t memo_count_ = 0;
  std::size_t next_ = 0;
  std::size_t next_high_ = 0;
  std::size_t allocations_ = 0;
};

}  // namespace fusor::cpu
