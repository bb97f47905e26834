// fusor/core/who.hpp — whoever an error message is about: a string, or a
// callable that builds it only when a check fails (a call that passes its
// checks builds no string), and a reference to either without its type, so
// that a refusal's message is compiled once per unit, not once per caller.
#pragma once

#include <string>
#include <type_traits>

namespace fusor::detail {

/// The name of whoever a message is about: a string, or a callable building it.
template <class Who>
std::string who_text(const Who& who) {
  if constexpr (std::is_invocable_v<const Who&>) return std::string(who());
  else return std::string(who);
}

/// A reference to whoever a message is about (a string or a callable, as
/// who_text takes), without its type.
class who_ref {
 public:
  template <class Who>
  explicit who_ref(const Who& who) noexcept
      : who_(&who), text_([](const void* w) { return who_text(*static_cast<const Who*>(w)); }) {}
  std::string operator()() const { return text_(who_); }

 private:
  const void* who_;
  std::string (*text_)(const void*);
};

}  // namespace fusor::detail
