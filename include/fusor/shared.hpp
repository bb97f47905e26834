// fusor/shared.hpp — fusor::shared<T>, a handle on a variable whose storage
// fusor owns (Theano's SharedVariable), with the seeds' borrow semantics:
//
//   auto s_default = fusor::shared(np_array);                // deep copy
//   auto s_false   = fusor::shared(np_array, fusor::copy);   // deep copy
//   auto s_true    = fusor::shared(np_array, fusor::borrow); // aliases (host)
//
// A handle is reference counted: copying it yields another handle on the same
// variable (PyTensor's clone(), R12). Values go in and out through
// get_value / set_value; docs/guide.md's "Shared variables" has the table of
// calls, docs/memory-model.md the rules (R8–R32).
#pragma once

#include <concepts>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/settings.hpp"
#include "fusor/core/tags.hpp"
#include "fusor/shared/cast.hpp"
#include "fusor/shared/constructor.hpp"
#include "fusor/shared/strided_argument.hpp"
#include "fusor/shared/readonly_view.hpp"
#include "fusor/shared/variable.hpp"

namespace fusor {

template <class T>
class shared;

template <class T>
inline constexpr bool is_shared_v = false;
template <class T>
inline constexpr bool is_shared_v<shared<T>> = true;

namespace detail {
template <class T>
struct record_of {
  using type = generic_variable<T>;
};
template <tensor_shareable T>
struct record_of<T> {
  using type = tensor_variable<element_type_of<T>>;
};

/// The message for a value of rank `d.rank()` offered to a variable whose rank
/// was fixed at 0 although its C++ type would allow any (xt::xarray<E>,
/// fusor::array<E>): most often the variable was made from a default-
/// constructed xt::xarray, which is 0-d (one element), as a placeholder.
inline std::string fixed_rank_zero_message(const std::string& who, const dims& d) {
  return who + ": wrong number of dimensions: expected 0, got " + std::to_string(d.rank()) + " with shape " + d.str() +
         ". A shared variable's rank is fixed when it is created, and this one was created from a 0-d value (a "
         "default-constructed xt::xarray is 0-d: it holds one element). Create it from a value of the rank you "
         "mean (an empty matrix: xt::xarray<E>::from_shape({0, 0})), or let a file give it rank and values with "
         "fusor::load<xt::xarray<E>>(file) or fusor::load<xt::xarray<E>>(file.npz, entry)";
}

template <class T>
constexpr bool check_registered() {
  static_assert(registered<T>,
                "fusor::shared<T>: T is not registered. Create shared variables from xt::xarray<E>, "
                "xt::xtensor<E, N>, std::vector<E> or an arithmetic value, or register T by specialising "
                "fusor::shared_constructor<T> (see docs/guide.md, 'Registering your own types').");
  static_assert(!std::is_reference_v<T> && !std::is_const_v<T>, "fusor::shared<T>: T must be a plain value type");
  return true;
}
}  // namespace detail

template <class T>
class shared {
  static_assert(detail::check_registered<T>());
  static_assert(!detail::declares_strides_v<T>,
                "fusor::shared: a type whose constructor declares strides is a view of someone else's memory: pass "
                "it as a function or eval argument; make a shared variable from an owning container instead");

  static constexpr bool is_tensor = tensor_shareable<T>;
  using record_type = typename detail::record_of<T>::type;

 public:
  /// The user-space type: what get_value() returns (the seeds' policy).
  using value_type = T;

  // ------------------------------------------------------------ construction
  // Each form also takes an options aggregate or just a name:
  //   fusor::shared(v, "W"), fusor::shared(v, fusor::borrow, {.name = "W", .strict = true})

  /// Deep copy of `v` (Theano's default, borrow=False).
  explicit shared(const T& v, shared_options options = {}) { init_copy(v, std::move(options)); }
  template <std::convertible_to<std::string> Name>
  shared(const T& v, const Name& name) : shared(v, shared_options{.name = std::string(name)}) {}
  shared(const T& v, copy_t, shared_options options = {}) { init_copy(v, std::move(options)); }
  template <std::convertible_to<std::string> Name>
  shared(const T& v, copy_t, const Name& name) : shared(v, copy, shared_options{.name = std::string(name)}) {}

  /// Aliases `v`'s buffer on the host (Theano's borrow=True): changes made to
  /// `v` are seen by the variable. Its lifetime is the caller's. A copy is made
  /// when `v`'s buffer is already held by another shared variable (M3),
  /// when storage is requested on a device, and for scalars (R9).
  shared(T& v, borrow_t, shared_options options = {}) { init_borrow(v, std::move(options)); }
  template <std::convertible_to<std::string> Name>
  shared(T& v, borrow_t, const Name& name) : shared(v, borrow, shared_options{.name = std::string(name)}) {}
  /// A const value cannot be aliased by storage that fusor may write: copies.
  shared(const T& v, borrow_t, shared_options options = {}) { init_copy(v, std::move(options)); }

  /// Adopts a moved-in value: O(1) on the host, the elements stay where they are.
  explicit shared(T&& v, shared_options options = {}) { init_adopt(std::move(v), std::move(options)); }
  template <std::convertible_to<std::string> Name>
  shared(T&& v, const Name& name) : shared(std::move(v), shared_options{.name = std::string(name)}) {}
  shared(T&& v, borrow_t, shared_options options = {}) { init_adopt(std::move(v), std::move(options)); }
  shared(T&& v, copy_t, shared_options options = {}) { init_adopt(std::move(v), std::move(options)); }

  // ------------------------------------------------------------ identity

  const std::string& name() const noexcept { return record_->name(); }
  /// Whether two handles refer to the same variable.
  bool is(const shared& other) const noexcept { return record_ == other.record_; }
  std::uint64_t id() const noexcept { return record_->id(); }
  bool strict() const noexcept { return record_->options().strict; }
  bool allow_downcast() const noexcept { return record_->options().allow_downcast.value_or(false); }
  const memory_space& space() const noexcept { return record_->options().space; }
  bool has_value() const noexcept { return record_->has_value(); }

  /// The record, for fusor's expression and function layers.
  const std::shared_ptr<record_type>& record() const noexcept { return record_; }

  // ------------------------------------------------------------ tensor facts

  static constexpr fusor::dtype dtype() noexcept
    requires is_tensor
  {
    return dtype_of<element_type_of<T>>;
  }
  std::size_t rank() const noexcept
    requires is_tensor
  {
    return record_->rank();
  }
  /// The current shape (it may change with set_value; the rank may not).
  dims shape() const
    requires is_tensor
  {
    require_value("shape()");
    return record_->storage().shape();
  }
  std::vector<bool> broadcastable() const
    requires is_tensor
  {
    std::vector<bool> b(record_->rank());
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = record_->broadcastable(i);
    return b;
  }

  // ------------------------------------------------------------ get_value

  /// A deep copy, of type T, never aliased to fusor's memory (R15). From a
  /// device, a copy to the host (an array<E> variable: a copy on its device).
  T get_value() const {
    require_value("get_value()");
    if constexpr (is_array_v<T>) {
      return record_->storage().clone();
    } else if constexpr (is_tensor) {
      const auto& a = record_->storage();
      if (a.on_host()) return shared_constructor<T>::make(a.shape(), a.data());
      const auto h = a.to(host);
      return shared_constructor<T>::make(h.shape(), h.data());
    } else {
      return T(*record_->object());
    }
  }
  /// A read-only view that aliases the storage on the host, in O(1) (R16).
  /// On a device, borrow aliases nothing: a view of a host copy.
  borrowed<T> get_value(borrow_t) const {
    require_value("get_value(borrow)");
    if constexpr (is_tensor) return borrowed<T>(host_view());
    else return borrowed<T>(std::shared_ptr<const T>(record_->object()));
  }
  /// The internal storage object itself, O(1), never cast (R18): for a tensor,
  /// the fusor::array<E> handle sharing the variable's buffer.
  auto get_value(borrow_t, internal_type_t) const {
    require_value("get_value(borrow, internal_type)");
    if constexpr (is_tensor) return record_->storage();
    else return borrowed<T>(std::shared_ptr<const T>(record_->object()));
  }
  /// A deep copy of the internal storage object (R17).
  auto get_value(copy_t, internal_type_t) const {
    require_value("get_value(copy, internal_type)");
    if constexpr (is_tensor) return record_->storage().clone();
    else return T(*record_->object());
  }
  /// Same as get_value().
  T get_value(copy_t) const { return get_value(); }

  // ------------------------------------------------------------ set_value
  // Every form validates first (rank, broadcastable axes, dtype) and changes
  // nothing when it refuses: the old value and buffer stay as they were.

  /// Copies `v` in (R19). `v` may be any registered tensor-like value or an
  /// arithmetic scalar of another dtype; it passes the casting rules (R28).
  /// On a device the value is written into the existing allocation when it
  /// has the same size and nothing else holds it (no second allocation).
  template <class V>
    requires is_tensor && tensor_shareable<std::remove_cvref_t<V>>
  void set_value(const V& v) {
    require_backed(v);
    copy_in(v);
  }
  /// Adopts a moved-in value of the variable's type in O(1) (no element copy).
  void set_value(T&& v)
    requires is_tensor
  {
    require_backed(v);
    if (!host_accessible(space()) && !same_space(v)) return copy_in(v);
    record_->install(adopt_storage(std::move(v)));
  }
  /// Aliases `v` (R21) when its dtype matches; otherwise converts into fresh
  /// storage. A buffer held by another shared variable is copied (M3). On a
  /// device, borrow aliases nothing (except a fusor::array of that device).
  template <class V>
    requires is_tensor && tensor_shareable<std::remove_cvref_t<V>>
  void set_value(V&& v, borrow_t) {
    using U = std::remove_cvref_t<V>;
    require_backed(v);
    if constexpr (!std::is_same_v<element_type_of<U>, element_type_of<T>> || rank_of<U> == 0) {
      copy_in(v);
    } else {
      if (!same_space(v)) return copy_in(v);
      if constexpr (std::is_lvalue_reference_v<V> && !std::is_const_v<std::remove_reference_t<V>>) {
        record_->install(borrow_storage(v));
      } else if constexpr (std::is_rvalue_reference_v<V&&> && !std::is_const_v<std::remove_reference_t<V>>) {
        record_->install(adopt_storage(std::move(v)));
      } else if constexpr (is_array_v<U>) {
        record_->install(borrow_storage(v));  // a handle: sharing it is what borrowing an array means
      } else {
        copy_in(v);
      }
    }
  }
  template <class V>
    requires is_tensor && tensor_shareable<std::remove_cvref_t<V>>
  void set_value(const V& v, copy_t) {
    require_backed(v);
    copy_in(v);
  }

  // Generic variables: copy, move, or alias the object itself.
  void set_value(const T& v)
    requires(!is_tensor)
  {
    record_->install(std::make_shared<T>(v));
  }
  void set_value(T&& v)
    requires(!is_tensor)
  {
    record_->install(std::make_shared<T>(std::move(v)));
  }
  void set_value(T& v, borrow_t)
    requires(!is_tensor)
  {
    record_->install(borrow_object(v));
  }

  // ------------------------------------------------------------ .value

  /// Theano's `.value` property: get_value(borrow) when
  /// fusor::config().shared_value_borrows (the default), else a private copy.
  /// The flag is read at every access (R32).
  borrowed<T> value() const {
    if (config().shared_value_borrows) return get_value(borrow);
    require_value("value()");
    if constexpr (is_tensor) return borrowed<T>(record_->storage().to(host));
    else return borrowed<T>(std::make_shared<const T>(*record_->object()));
  }
  /// `s.value = v`: set_value(v, borrow) or set_value(v), by the same flag.
  template <class V>
  void value(V&& v) {
    if (config().shared_value_borrows) set_value(std::forward<V>(v), borrow);
    else set_value(std::as_const(v));
  }

  // ------------------------------------------------------------ zero

  /// Replaces the value by zeros in a new buffer; views taken earlier keep the
  /// old values (R25).
  void zero()
    requires is_tensor
  {
    require_value("zero()");
    auto fresh = array<element_type_of<T>>::allocate(record_->storage().shape(), space());
    fill_zero(fresh);
    record_->install(std::move(fresh));
  }
  /// Writes zeros into the current buffer: everything aliasing it (a borrowed
  /// user array, earlier views) sees the zeros (R25).
  void zero(borrow_t)
    requires is_tensor
  {
    require_value("zero(borrow)");
    fill_zero(record_->storage());
    record_->written_in_place();
  }

  // ------------------------------------------------------------ take_value

  /// Moves the value out and leaves the variable empty until the next
  /// set_value. O(1) when the variable adopted a T that nothing else views;
  /// otherwise one copy. With set_value(std::move(v)) this is the C++ spelling
  /// of the seeds' in-place pattern `s.set_value(fn(s.get_value(borrow)), borrow)`.
  T take_value() {
    require_value("take_value()");
    T out = [&] {
      if constexpr (is_tensor) {
        if (auto object = record_->storage().storage().template adopted_object<T>();
            object && object.use_count() == 2 /* this local and the storage */)
          return T(std::move(*object));
      } else {
        if (record_->object().use_count() == 1) return T(std::move(*record_->object()));
      }
      return get_value();
    }();
    if constexpr (is_tensor) record_->clear();
    else record_->install(nullptr);
    return out;
  }

 private:
  /// Zeros in an array's buffer, wherever it lives.
  template <class A>
  static void fill_zero(const A& a) {
    // An empty value may have no buffer at all: memset(nullptr, 0, 0) is undefined.
    if (a.bytes() == 0) return;
    if (a.on_host()) std::memset(static_cast<void*>(a.mutable_data()), 0, a.bytes());
    else device_runtime_for(a.space()).zero(a.space().device, a.mutable_data(), a.bytes());
  }

  /// What get_value(borrow) views: the storage itself on the host, a host copy
  /// of it on a device.
  auto host_view() const {
    const auto& a = record_->storage();
    return a.on_host() ? a : a.to(host);
  }

  /// Whether `v`'s elements live in the variable's space (so that its buffer
  /// can be aliased or adopted).
  template <class V>
  bool same_space(const V& v) const {
    return space_of(v) == space();
  }

  /// The copy forms of set_value. A value in another space, or of another
  /// dtype, is copied (converted on the host). On a device, the value goes
  /// into the existing allocation when it has the same byte size and nothing
  /// but the variable holds it; otherwise into a new one.
  template <class V>
  void copy_in(const V& v) {
    if (host_accessible(space())) return record_->install(filtered_copy(v));
    using C = shared_constructor<V>;
    using E = element_type_of<T>;
    const dims d = C::shape(v);
    validate_shape<V>(d);
    const std::size_t bytes = d.elements() * sizeof(E);
    const auto& cur = record_->storage();
    const bool reuse = record_->has_value() && bytes != 0 && cur.storage().how() == ownership::owned &&
                       cur.storage().bytes() == bytes && cur.storage().use_count() == 1;
    if (!reuse) return record_->install(filtered_copy(v));
    if constexpr (std::is_same_v<element_type_of<V>, E>) {
      copy_bytes(cur.mutable_data(), space(), C::data(v), space_of(v), bytes);
    } else {
      const auto h = converted_on_host(v, d);
      copy_bytes(cur.mutable_data(), space(), h.data(), host, bytes);
    }
    if (cur.shape() == d) record_->written_in_place();
    else record_->install(array<E>(cur.storage(), d));
  }

  /// `v` converted to the variable's dtype, on the host, after the casting
  /// checks.
  template <class V>
  auto converted_on_host(const V& v, const dims& d) const {
    using C = shared_constructor<V>;
    using Src = element_type_of<V>;
    using E = element_type_of<T>;
    array<Src> staged;
    const Src* src = C::data(v);
    if (space_of(v) != host) {
      staged = array<Src>::copy_of(d, src, host, space_of(v));
      src = staged.data();
    }
    // An arithmetic C++ value is Theano's "Python scalar": exact-value rule.
    check_cast<E, Src>(record_->describe(), src, d.elements(), std::is_arithmetic_v<V>, policy());
    auto out = array<E>::allocate(d, host);
    E* dst = out.mutable_data();
    for (std::size_t i = 0, n = d.elements(); i < n; ++i) dst[i] = convert_element<E>(src[i]);
    return out;
  }

  template <class V>
  void validate_shape(const dims& d) const {
    if constexpr (is_tensor) {
      static_assert(rank_of<T> == dynamic_rank || rank_of<V> == dynamic_rank || rank_of<T> == rank_of<V>,
                    "fusor::shared<T>::set_value: the value's static rank differs from the variable's; a shared "
                    "variable's rank never changes (pass a value of the variable's rank)");
      if constexpr (rank_of<T> == dynamic_rank)
        if (record_->rank() == 0 && d.rank() != 0)
          throw rank_error(detail::fixed_rank_zero_message(record_->describe(), d));
      require_shape([&] { return record_->describe(); }, record_->rank(), record_->broadcastable_mask(), d,
                    dtype_of<element_type_of<V>>);
    }
  }

  cast_policy policy() const noexcept { return {strict(), allow_downcast()}; }

  template <class V>
  auto filtered_copy(const V& v) const {
    using C = shared_constructor<V>;
    using Src = element_type_of<V>;
    using E = element_type_of<T>;
    const dims d = C::shape(v);
    validate_shape<V>(d);
    if constexpr (std::is_same_v<Src, E>) {
      return array<E>::copy_of(d, C::data(v), space(), space_of(v));
    } else {
      auto out = converted_on_host(v, d);
      return host_accessible(space()) ? out : out.to(space());
    }
  }

  template <class V>
  auto borrow_storage(V& v) const {
    using C = shared_constructor<V>;
    using E = element_type_of<T>;
    const dims d = C::shape(v);
    validate_shape<V>(d);
    if constexpr (is_array_v<V>) {
      // An array is a handle: the variable shares its buffer (a copy when
      // another variable holds it, M3).
      if (v.space() != space() || variable_base::held_by_another(v.data(), v.bytes(), record_.get()))
        return array<E>::copy_of(d, v.data(), space(), v.space());
      return array<E>(v.storage(), d);
    }
    const std::size_t bytes = d.elements() * sizeof(E);
    // The object is not const, so writing through its data pointer is allowed.
    E* p = const_cast<E*>(C::data(v));
    if (!host_accessible(space()) || variable_base::held_by_another(p, bytes, record_.get()))
      return array<E>::copy_of(d, p, space());
    return array<E>(buffer::borrow(p, bytes), d);
  }

  template <class V>
  auto adopt_storage(V&& v) const {
    using U = std::remove_cvref_t<V>;
    using C = shared_constructor<U>;
    using E = element_type_of<T>;
    const dims d = C::shape(v);
    validate_shape<U>(d);
    const std::size_t bytes = d.elements() * sizeof(E);
    if constexpr (rank_of<U> == 0) {
      return filtered_copy(v);  // scalars are always copied (R9)
    } else if constexpr (is_array_v<U>) {
      return borrow_storage(v);
    } else {
      if (!host_accessible(space()) || variable_base::held_by_another(C::data(v), bytes, record_.get()))
        return array<E>::copy_of(d, C::data(v), space());
      buffer b = buffer::adopt(std::move(v), [](const U& o) { return const_cast<E*>(C::data(o)); }, bytes);
      return array<E>(std::move(b), d);
    }
  }

  std::shared_ptr<T> borrow_object(T& v) const {
    if (variable_base::held_by_another(&v, sizeof(T), record_.get())) return std::make_shared<T>(v);
    return std::shared_ptr<T>(&v, [](T*) noexcept {});
  }

  std::size_t initial_rank(const T& v) const {
    if constexpr (is_tensor) return shared_constructor<T>::shape(v).rank();
    else return 0;
  }

  void make_record(const T& v, shared_options options) {
    // A variable made from a fusor::array lives where the array does, unless
    // asked to live elsewhere.
    if constexpr (is_array_v<T>)
      if (host_accessible(options.space)) options.space = v.space();
    if constexpr (is_tensor) {
      require_backed(v, [&] {
        return options.name.empty() ? std::string("fusor::shared") : "fusor::shared '" + options.name + "'";
      });
      const std::size_t r = initial_rank(v);
      if (!options.broadcastable.empty() && options.broadcastable.size() != r)
        throw value_error("fusor::shared: the broadcastable pattern of " +
                          (options.name.empty() ? std::string("an unnamed variable") : "'" + options.name + "'") +
                          " has " + std::to_string(options.broadcastable.size()) +
                          " entries, but the value has rank " + std::to_string(r));
      record_ = std::make_shared<record_type>(std::move(options), r);
    } else {
      record_ = std::make_shared<record_type>(std::move(options));
    }
  }

  void init_copy(const T& v, shared_options options) {
    make_record(v, std::move(options));
    if constexpr (is_tensor) record_->install(filtered_copy(v));
    else record_->install(std::make_shared<T>(v));
  }
  void init_borrow(T& v, shared_options options) {
    make_record(v, std::move(options));
    if constexpr (is_tensor) {
      if constexpr (rank_of<T> == 0) record_->install(filtered_copy(v));
      else record_->install(borrow_storage(v));
    } else {
      record_->install(borrow_object(v));
    }
  }
  void init_adopt(T&& v, shared_options options) {
    make_record(v, std::move(options));
    if constexpr (is_tensor) record_->install(adopt_storage(std::move(v)));
    else record_->install(std::make_shared<T>(std::move(v)));
  }

  /// A fusor::array without the bytes its shape needs (a default-constructed
  /// one) is no value: refused before anything reads it, naming `who`.
  template <class V, class Who>
  static void require_backed(const V& v, const Who& who) {
    if constexpr (is_array_v<V>)
      if (v.storage().bytes() < v.bytes())
        throw value_error(std::string(who()) + ": received " + detail::unbacked_array_message(v));
  }
  template <class V>
  void require_backed(const V& v) const {
    require_backed(v, [&] { return record_->describe(); });
  }

  void require_value(const char* what) const {
    if (!record_->has_value())
      throw value_error(record_->describe() + " has no value: " + what +
                        " was called after take_value() and before the next set_value()");
  }

  std::shared_ptr<record_type> record_;
};

// `fusor::shared(value, ...)` deduces shared<decayed value type>.
template <class V, class... Rest>
  requires(!is_shared_v<std::remove_cvref_t<V>>)
shared(V&&, Rest&&...) -> shared<std::remove_cvref_t<V>>;

}  // namespace fusor
