// fusor/shared/readonly_view.hpp — what `get_value(fusor::borrow)` returns: a
// read-only view of a shared variable's storage.
//
// The seeds warn "do not modify a shared variable by side effect through a
// borrowed value". Here that is a compile error: every element access is const
// and the underlying xtensor adaptor wraps a `const E*`. A view keeps the
// storage it looks at alive, so it never dangles: after set_value() it still
// shows the old values (R23), and after an in-place write (zero(borrow)) it
// shows the new ones.
#pragma once

#include <memory>
#include <ostream>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xio.hpp>

#include "fusor/memory/array.hpp"
#include "fusor/shared/constructor.hpp"

namespace fusor {

namespace detail {
template <class E, int Rank>
struct readonly_adaptor {
  using storage = xt::xbuffer_adaptor<const E*, xt::no_ownership, std::allocator<E>>;
  using type = xt::xtensor_adaptor<storage, static_cast<std::size_t>(Rank)>;
  static typename type::shape_type shape(const dims& d) {
    typename type::shape_type s{};
    for (std::size_t i = 0; i < d.rank(); ++i) s[i] = d[i];
    return s;
  }
};
template <class E>
struct readonly_adaptor<E, dynamic_rank> {
  using storage = xt::xbuffer_adaptor<const E*, xt::no_ownership, std::allocator<E>>;
  // An inline small vector: making a view never allocates (borrowed outputs of
  // a steady-state call must not).
  using type = xt::xarray_adaptor<storage, xt::layout_type::row_major, xt::svector<std::size_t, max_rank>>;
  static typename type::shape_type shape(const dims& d) { return typename type::shape_type(d.begin(), d.end()); }
};
}  // namespace detail

/// A read-only view of tensor storage. Use `.xt()` to pass it to xtensor.
template <element E, int Rank>
class readonly_view {
  using adaptor_traits = detail::readonly_adaptor<E, Rank>;

 public:
  using value_type = E;
  using xtensor_type = typename adaptor_traits::type;

  explicit readonly_view(const array<E>& storage)
      : storage_(storage),
        view_(typename adaptor_traits::storage(storage.data(), storage.size()), adaptor_traits::shape(storage.shape())) {}

  /// The view as an xtensor expression (read-only): `xt::sum(v.xt())`.
  const xtensor_type& xt() const noexcept { return view_; }
  operator const xtensor_type&() const noexcept { return view_; }

  const E* data() const noexcept { return storage_.data(); }
  const dims& shape() const noexcept { return storage_.shape(); }
  std::size_t size() const noexcept { return storage_.size(); }
  std::size_t dimension() const noexcept { return storage_.rank(); }

  template <class... I>
  const E& operator()(I... i) const {
    return view_(i...);
  }
  /// Flat (row-major) element access.
  const E& flat(std::size_t i) const noexcept { return data()[i]; }
  const E* begin() const noexcept { return data(); }
  const E* end() const noexcept { return data() + size(); }

  /// Element-wise equality with any xtensor expression or view, as xtensor
  /// defines it for containers (same shape and values).
  template <class Other>
  friend bool operator==(const readonly_view& a, const Other& b) {
    if constexpr (requires { b.xt(); }) return a.xt() == b.xt();
    else return a.xt() == b;
  }

  friend std::ostream& operator<<(std::ostream& os, const readonly_view& v) { return os << v.view_; }

 private:
  array<E> storage_;  // keeps the bytes alive
  xtensor_type view_;
};

/// A read-only view is a value fusor knows: a function argument or an eval
/// binding (`f(W.get_value(fusor::borrow))`, Theano's idiom), read in place.
/// It is never written, even lent with In(x, borrow) after the variable it
/// came from moved to another buffer (`read_only`). A shared variable made
/// from one holds a copy, like any value.
template <element E, int Rank>
struct shared_constructor<readonly_view<E, Rank>> {
  using element_type = E;
  static constexpr int rank = Rank;
  static constexpr bool read_only = true;
  static dims shape(const readonly_view<E, Rank>& v) { return v.shape(); }
  static const E* data(const readonly_view<E, Rank>& v) noexcept { return v.data(); }
  static readonly_view<E, Rank> make(const dims& d, const E* src) {
    return readonly_view<E, Rank>(array<E>::copy_of(d, src));
  }
};

/// A read-only view of a rank-0 (scalar) shared variable.
template <element E>
class readonly_scalar {
 public:
  using value_type = E;
  explicit readonly_scalar(const array<E>& storage) : storage_(storage) {}
  const E& get() const noexcept { return *storage_.data(); }
  operator const E&() const noexcept { return get(); }
  const E* data() const noexcept { return storage_.data(); }
  friend std::ostream& operator<<(std::ostream& os, const readonly_scalar& v) { return os << +v.get(); }

 private:
  array<E> storage_;
};

/// A read-only reference to a generic shared variable's object.
template <class T>
class readonly_ref {
 public:
  using value_type = T;
  explicit readonly_ref(std::shared_ptr<const T> object) : object_(std::move(object)) {}
  const T& get() const noexcept { return *object_; }
  const T& operator*() const noexcept { return *object_; }
  const T* operator->() const noexcept { return object_.get(); }
  operator const T&() const noexcept { return *object_; }

 private:
  std::shared_ptr<const T> object_;
};

namespace detail {
template <class T>
struct borrowed_type {
  using type = readonly_ref<T>;
};
template <tensor_shareable T>
struct borrowed_type<T> {
  using E = element_type_of<T>;
  using type = std::conditional_t<rank_of<T> == 0, readonly_scalar<E>, readonly_view<E, rank_of<T>>>;
};
}  // namespace detail

/// What `shared<T>::get_value(fusor::borrow)` returns.
template <class T>
using borrowed = typename detail::borrowed_type<T>::type;

}  // namespace fusor
