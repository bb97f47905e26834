// test/test_util.hpp — small helpers that several test units share. The suite
// compiles groups of units as one translation unit (test/meson.build), so a
// helper two units would define alike is defined here, once.
#pragma once

#include <string>

#include <xtensor/xslice.hpp>

namespace fusor_test {

/// Whether `text` contains `part` (an error message, a printed plan).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The address of a container's first element, for the aliasing checks.
template <class V>
const void* address(const V& v) {
  return static_cast<const void*>(v.data());
}

/// xtensor's own "omitted bound" of a range (`xt::range(xt_, 3)`).
inline constexpr auto xt_ = xt::placeholders::_;

}  // namespace fusor_test
