// fusor/shared/variable.hpp — the record behind a shared<T> handle, and the
// process-wide registry of live records that enforces rule M3 of
// docs/memory-model.md: no two
// shared variables ever hold one buffer.
//
// The registry is an intrusive list (no allocation when a record's storage
// changes, so updates in a steady-state call stay allocation-free) guarded by
// one mutex; it is walked only when a user buffer is borrowed or adopted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fusor/memory/array.hpp"
#include "fusor/shared/options.hpp"

namespace fusor {

class variable_base;

namespace detail {
struct variable_registry {
  std::mutex mutex;
  variable_base* head = nullptr;
};
inline variable_registry& registry() noexcept {
  static variable_registry r;
  return r;
}
inline std::uint64_t next_variable_id() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
}  // namespace detail

/// What every shared variable record has, whatever its C++ type: identity,
/// name, options, and the byte range it currently holds.
class variable_base {
 public:
  FUSOR_RUNTIME explicit variable_base(shared_options options);
  variable_base(const variable_base&) = delete;
  variable_base& operator=(const variable_base&) = delete;
  /// Out of line, like the constructor (shared/impl/variable.ipp): both
  /// lock the registry.
  FUSOR_RUNTIME virtual ~variable_base();

  const std::string& name() const noexcept { return options_.name; }
  const shared_options& options() const noexcept { return options_; }
  std::uint64_t id() const noexcept { return id_; }
  /// Bumped whenever the storage is replaced or written in place by fusor.
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  /// Bumped only when the storage is replaced (not when it is written in
  /// place): while it is unchanged, so are the buffer, its shape and whether
  /// the variable has a value. A compiled function's fast path relies on it.
  std::uint64_t storage_version() const noexcept { return storage_version_.load(std::memory_order_acquire); }

  /// A counter that fusor advances after every successful call that reads the
  /// variable (a random stream's state: random/stream.hpp); null for others.
  using advance_fn = void (*)(variable_base&);
  advance_fn advance() const noexcept { return advance_; }
  void set_advance(advance_fn f) noexcept { advance_ = f; }

  /// A constant (fusor::constant(array)) is a variable nobody can update;
  /// unlike a variable, it may be read by a function running in another
  /// memory space, which reads its copy there: made by `replicate` when a
  /// function first needs it, and kept for the next.
  using replicate_fn = std::shared_ptr<variable_base> (*)(const variable_base&, const memory_space&);
  void mark_constant(replicate_fn replicate) noexcept { replicate_ = replicate; }
  bool is_constant() const noexcept { return replicate_ != nullptr; }
  /// The constant in `space`: itself there, else its copy there.
  const variable_base* constant_in(const memory_space& space) const {
    if (options_.space == space) return this;
    std::lock_guard lock(replicas_mutex_);
    for (const auto& [where, copy] : replicas_)
      if (where == space) return copy.get();
    replicas_.emplace_back(space, replicate_(*this, space));
    return replicas_.back().second.get();
  }

  /// "shared variable 'W'" — the subject of every message about it.
  std::string describe() const {
    return options_.name.empty() ? std::string("unnamed shared variable #") + std::to_string(id_)
                                 : "shared variable '" + options_.name + "'";
  }

  /// Whether a shared variable other than `self` holds any byte of [p, p+n).
  static bool held_by_another(const void* p, std::size_t n, const variable_base* self) {
    if (n == 0) return false;
    auto& r = detail::registry();
    std::lock_guard lock(r.mutex);
    const auto* b = static_cast<const std::byte*>(p);
    for (const variable_base* v = r.head; v; v = v->next_) {
      if (v == self || v->bytes_ == 0) continue;
      if (b < v->lo_ + v->bytes_ && v->lo_ < b + n) return true;
    }
    return false;
  }

 protected:
  /// Records the byte range now held; called with every storage change.
  void note_storage(const std::byte* lo, std::size_t bytes) noexcept {
    auto& r = detail::registry();
    std::lock_guard lock(r.mutex);
    lo_ = lo;
    bytes_ = bytes;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    storage_version_.fetch_add(1, std::memory_order_acq_rel);
  }
  void note_written() noexcept { generation_.fetch_add(1, std::memory_order_acq_rel); }

  shared_options options_;

 private:
  std::uint64_t id_;
  advance_fn advance_ = nullptr;
  replicate_fn replicate_ = nullptr;
  mutable std::mutex replicas_mutex_;
  mutable std::vector<std::pair<memory_space, std::shared_ptr<variable_base>>> replicas_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint64_t> storage_version_{0};
  const std::byte* lo_ = nullptr;
  std::size_t bytes_ = 0;
  variable_base* prev_ = nullptr;
  variable_base* next_ = nullptr;
};

/// The record of a tensor shared variable: its storage, rank and pattern.
template <element E>
class tensor_variable : public variable_base {
 public:
  tensor_variable(shared_options options, std::size_t rank) : variable_base(std::move(options)), rank_(rank) {
    for (std::size_t i = 0; i < options_.broadcastable.size(); ++i)
      if (options_.broadcastable[i]) broadcastable_mask_ |= 1u << i;
  }

  const array<E>& storage() const noexcept { return storage_; }
  bool has_value() const noexcept { return has_value_; }
  std::size_t rank() const noexcept { return rank_; }
  bool broadcastable(std::size_t axis) const noexcept { return (broadcastable_mask_ >> axis) & 1u; }
  std::uint32_t broadcastable_mask() const noexcept { return broadcastable_mask_; }

  /// Installs new storage; the old one is released after the lock is dropped
  /// (views taken earlier keep it alive and keep the old values, R23).
  void install(array<E> next) noexcept {
    array<E> old = std::move(storage_);
    storage_ = std::move(next);
    has_value_ = true;
    note_storage(storage_.storage().data(), storage_.bytes());
  }
  /// Installs new storage and hands back the old one (a compiled function keeps
  /// it as the spare buffer of its next update: ping-pong, no allocation).
  array<E> exchange(array<E> next) noexcept {
    array<E> old = std::move(storage_);
    storage_ = std::move(next);
    has_value_ = true;
    note_storage(storage_.storage().data(), storage_.bytes());
    return old;
  }
  /// Drops the storage (take_value()).
  void clear() noexcept {
    storage_ = array<E>();
    has_value_ = false;
    note_storage(nullptr, 0);
  }
  /// fusor wrote into the storage in place (zero(borrow), in-place updates).
  void written_in_place() noexcept { note_written(); }
  /// The elements, for fusor's own in-place writes (then written_in_place()).
  E* data_for_writing() noexcept { return storage_.mutable_data(); }

  /// A copy of this record's value in `space`, as a record of its own (a
  /// constant's copy: variable_base::constant_in).
  static std::shared_ptr<variable_base> replicate(const variable_base& self, const memory_space& space) {
    const auto& me = static_cast<const tensor_variable&>(self);
    shared_options options = me.options();
    options.space = space;
    auto copy = std::make_shared<tensor_variable>(std::move(options), me.rank());
    copy->install(me.storage().to(space));
    copy->mark_constant(&replicate);
    return copy;
  }

 private:
  array<E> storage_;
  bool has_value_ = false;
  std::size_t rank_;
  std::uint32_t broadcastable_mask_ = 0;
};

/// The record of a generic shared variable (PyTensor's generic type, R14).
template <class T>
class generic_variable : public variable_base {
 public:
  using variable_base::variable_base;
  const std::shared_ptr<T>& object() const noexcept { return object_; }
  bool has_value() const noexcept { return object_ != nullptr; }
  void install(std::shared_ptr<T> next) noexcept {
    object_.swap(next);
    note_storage(reinterpret_cast<const std::byte*>(object_.get()), object_ ? sizeof(T) : 0);
  }

 private:
  std::shared_ptr<T> object_;
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/shared/impl/variable.ipp"
#endif
