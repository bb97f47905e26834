// fusor/compile/borrowed_output.hpp — what Out(y, fusor::borrow) returns: a
// read-only view of a buffer the function reuses on every call. Valid until
// the next call that may write it; in checked builds (FUSOR_CHECKED, on by
// default without NDEBUG) every access after that raises
// fusor::stale_borrow_error instead of silently reading newer values.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "fusor/core/config.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/shared/readonly_view.hpp"

namespace fusor {

/// Shared by a function's output slot and the views it hands out: the slot's
/// generation (bumped whenever the function rewrites the buffer) and a
/// description for messages. Handing out a view copies one pointer.
struct output_stamp {
  std::atomic<std::uint64_t> generation{0};
  std::string what;
};

template <element E, int Rank>
class borrowed_output {
  using view_type = readonly_view<E, Rank == 0 ? dynamic_rank : Rank>;

 public:
  using value_type = E;

  borrowed_output(const array<E>& storage, std::shared_ptr<const output_stamp> stamp)
      : view_(storage), stamp_(std::move(stamp)), generation_(stamp_->generation.load(std::memory_order_acquire)) {}

  /// Whether the function has since overwritten the buffer (any build).
  bool stale() const noexcept { return stamp_->generation.load(std::memory_order_acquire) != generation_; }

  const typename view_type::xtensor_type& xt() const {
    check();
    return view_.xt();
  }
  const E* data() const {
    check();
    return view_.data();
  }
  const dims& shape() const noexcept { return view_.shape(); }
  std::size_t size() const noexcept { return view_.size(); }
  template <class... I>
  const E& operator()(I... i) const {
    check();
    return view_(i...);
  }
  const E& flat(std::size_t i) const {
    check();
    return view_.flat(i);
  }
  /// The scalar of a rank-0 output.
  E value() const {
    check();
    return view_.flat(0);
  }
  template <class Other>
  friend bool operator==(const borrowed_output& a, const Other& b) {
    a.check();
    return a.view_ == b;
  }

 private:
  void check() const {
#if FUSOR_CHECKED
    if (stale())
      throw stale_borrow_error("fusor: " + stamp_->what +
                               " was read after the function reused its buffer (a later call overwrote it). Use a "
                               "borrowed output before calling the function again, or ask for Out(y) to get a value "
                               "of your own");
#endif
  }

  view_type view_;
  std::shared_ptr<const output_stamp> stamp_;
  std::uint64_t generation_;
};

}  // namespace fusor
