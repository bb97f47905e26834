// fusor/core/dims.hpp — a shape stored inline (no heap), its printing, and
// NumPy broadcasting of two shapes.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>

#include "fusor/core/config.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/core/who.hpp"

namespace fusor {

/// The extents of a value of rank <= max_rank, stored inline so that copying a
/// shape never allocates (steady-state calls must not).
class dims {
 public:
  constexpr dims() noexcept = default;
  constexpr dims(std::initializer_list<std::size_t> extents) {
    if (extents.size() > max_rank) throw rank_error("fusor: rank " + std::to_string(extents.size()) +
                                                    " exceeds FUSOR_MAX_RANK (" + std::to_string(max_rank) + ")");
    for (std::size_t e : extents) extent_[rank_++] = e;
  }
  /// From any sequence of extents (a std::vector, xtensor's svector, ...).
  template <class Seq>
    requires requires(const Seq& s) { s.size(); s.begin(); }
  static dims from(const Seq& s) {
    if (s.size() > max_rank)
      throw rank_error("fusor: rank " + std::to_string(s.size()) + " exceeds FUSOR_MAX_RANK (" +
                       std::to_string(max_rank) + ")");
    dims d;
    for (auto e : s) d.extent_[d.rank_++] = static_cast<std::size_t>(e);
    return d;
  }

  constexpr std::size_t rank() const noexcept { return rank_; }
  constexpr std::size_t operator[](std::size_t i) const noexcept { return extent_[i]; }
  constexpr std::size_t& operator[](std::size_t i) noexcept { return extent_[i]; }
  constexpr const std::size_t* begin() const noexcept { return extent_.data(); }
  constexpr const std::size_t* end() const noexcept { return extent_.data() + rank_; }
  constexpr std::size_t size() const noexcept { return rank_; }

  /// Number of elements (1 for rank 0).
  constexpr std::size_t elements() const noexcept {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) n *= extent_[i];
    return n;
  }

  constexpr void push_back(std::size_t e) {
    if (rank_ == max_rank) throw rank_error("fusor: rank exceeds FUSOR_MAX_RANK");
    extent_[rank_++] = e;
  }

  friend constexpr bool operator==(const dims& a, const dims& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (std::size_t i = 0; i < a.rank_; ++i)
      if (a.extent_[i] != b.extent_[i]) return false;
    return true;
  }

  /// NumPy's spelling: "(2, 3)", "(5,)", "()".
  FUSOR_RUNTIME std::string str() const;

 private:
  std::array<std::size_t, max_rank> extent_{};
  std::size_t rank_ = 0;
};

/// NumPy's limit on the size of an array, which fusor applies wherever extents
/// are multiplied: the product of the non-zero extents times the element size
/// must fit a signed 64-bit byte count. Within it every element count, byte
/// count, stride and offset fusor computes (index_t included) is exact; a
/// shape beyond it is refused with a shape_error, never wrapped modulo 2^64.
/// (Zero extents are skipped so that an empty (0, 2^62, 4) is refused too: its
/// strides would overflow.)
inline constexpr std::uint64_t max_array_bytes = static_cast<std::uint64_t>(INT64_MAX);

/// Whether `d`, with elements of `item` bytes, is within max_array_bytes.
/// Checked without ever overflowing (and without a division: it runs on
/// every argument of every call).
constexpr bool fits(const dims& d, std::size_t item = 1) noexcept {
  std::uint64_t bytes = item;
  for (std::size_t e : d) {
    if (e == 0) continue;
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(e), &bytes)) return false;
  }
  return bytes <= max_array_bytes;
}

/// The message of a shape that fails fits(): "shape (...) of float64 is too
/// large: ...". Built only on a refusal.
FUSOR_RUNTIME std::string too_large(const dims& d, dtype t);

namespace detail {
/// The first axis marked in `broadcastable` whose length is not 1, or -1.
inline int broadcast_violation(std::uint32_t broadcastable, const dims& d) noexcept {
  for (std::size_t i = 0; i < d.rank(); ++i)
    if (((broadcastable >> i) & 1u) && d[i] != 1) return static_cast<int>(i);
  return -1;
}

/// The refusals of require_shape: one function, whoever calls.
[[noreturn]] FUSOR_RUNTIME void refuse_shape(const who_ref& who, std::size_t rank, std::uint32_t broadcastable,
                                             const dims& d, dtype type);
}  // namespace detail

/// The rules a value meets wherever a rank and broadcastable axes are
/// declared — a shared variable, a symbolic input —: the declared rank, length
/// 1 on the broadcastable axes (bit d of `broadcastable`), and a shape an
/// array can have. `who()` names the holder ("shared variable 'W'", "input 0
/// ('x')") and is called only on a refusal, so a value that passes builds no
/// string. Throws rank_error or shape_error.
template <class Who>
void require_shape(const Who& who, std::size_t rank, std::uint32_t broadcastable, const dims& d, dtype type) {
  if (d.rank() != rank || (broadcastable && detail::broadcast_violation(broadcastable, d) >= 0) ||
      !fits(d, size_of(type)))
    detail::refuse_shape(detail::who_ref(who), rank, broadcastable, d, type);
}

/// Row-major (C order) element strides of a shape that fits().
inline std::array<index_t, max_rank> c_strides(const dims& d) noexcept {
  std::array<index_t, max_rank> s{};
  index_t acc = 1;
  for (std::size_t i = d.rank(); i-- > 0;) {
    s[i] = acc;
    acc *= static_cast<index_t>(d[i]);
  }
  return s;
}

/// Tries NumPy broadcasting of two shapes: aligned on the right, an extent of 1
/// stretches. Returns false (and leaves `out` unspecified) on a mismatch.
inline bool try_broadcast(const dims& a, const dims& b, dims& out) noexcept {
  const std::size_t r = a.rank() > b.rank() ? a.rank() : b.rank();
  dims result;
  for (std::size_t i = 0; i < r; ++i) result.push_back(1);
  for (std::size_t i = 0; i < r; ++i) {
    const std::size_t ea = i < r - a.rank() ? 1 : a[i - (r - a.rank())];
    const std::size_t eb = i < r - b.rank() ? 1 : b[i - (r - b.rank())];
    if (ea != eb && ea != 1 && eb != 1) return false;
    result[i] = ea == 1 ? eb : ea;
  }
  out = result;
  return true;
}

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/core/impl/dims.ipp"
#endif
