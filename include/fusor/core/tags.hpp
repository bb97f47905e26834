// fusor/core/tags.hpp — the flag objects of the public API: fusor::borrow,
// fusor::copy, fusor::internal_type. Tags, not bools, so that the choice is
// visible at the call site and chosen at compile time.
#pragma once

namespace fusor {

/// Permission to alias instead of copying (Theano's borrow=True). A permission,
/// never a command: fusor may still copy, e.g. to convert a dtype.
struct borrow_t {
  explicit constexpr borrow_t() = default;
};
/// Always copy (Theano's borrow=False, the default).
struct copy_t {
  explicit constexpr copy_t() = default;
};
/// Ask for the internal storage object rather than the user-space type
/// (Theano's return_internal_type=True).
struct internal_type_t {
  explicit constexpr internal_type_t() = default;
};

inline constexpr borrow_t borrow{};
inline constexpr copy_t copy{};
inline constexpr internal_type_t internal_type{};

}  // namespace fusor
