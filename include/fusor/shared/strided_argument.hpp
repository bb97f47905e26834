// fusor/shared/strided_argument.hpp — values that are views of someone else's
// memory: xtensor's views (xt::view, xt::strided_view, transposes) and
// adaptors (xt::adapt over a pointer), accepted as function and eval
// arguments and read where they are, through their strides.
//
// A strided argument is described by its shape, its element strides and the
// span of memory it covers; the plan reads it in place when it has the
// input's dtype on the host (no copy), and through a converting copy
// otherwise (the plan and its profile show the step). It is never written:
// In(x, borrow) lends nothing for a view, whose layout the plan did not choose.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/shared/constructor.hpp"

namespace fusor {

/// Where a strided argument's elements are: the span's lowest address is the
/// argument's data; element 0 is `first` elements after it.
struct strided_layout {
  bool strided = false;
  index_t first = 0;
  std::array<index_t, max_rank> strides{};
  friend bool operator==(const strided_layout&, const strided_layout&) = default;
};

namespace detail {
/// xtensor expressions with a data interface (data(), data_offset(),
/// strides()) of an element type, that are not registered containers.
template <class V, class = void>
inline constexpr bool is_strided_argument_v = false;
template <class V>
inline constexpr bool is_strided_argument_v<
    V, std::void_t<typename V::value_type, decltype(std::declval<const V&>().data()),
                   decltype(std::declval<const V&>().data_offset()), decltype(std::declval<const V&>().strides()),
                   decltype(std::declval<const V&>().shape())>> =
    !has_tensor_interface_v<V> && is_element_v<std::remove_cv_t<typename V::value_type>>;

/// The span a view covers, from its shape, element strides and first element:
/// its layout (strides, element 0's offset from the span start), its lowest
/// address and its bytes.
template <class E>
struct strided_span {
  dims shape;
  strided_layout layout;
  const E* lowest = nullptr;
  std::size_t bytes = 0;

  template <class Strides>
  strided_span(const dims& s, const Strides& strides, const E* first) : shape(s) {
    layout.strided = true;
    index_t low = 0, high = 0;
    for (std::size_t d = 0; d < shape.rank(); ++d) {
      layout.strides[d] = shape[d] == 1 ? 0 : static_cast<index_t>(strides[d]);
      const index_t reach = (static_cast<index_t>(shape[d]) - 1) * layout.strides[d];
      if (reach < 0) low += reach;
      else high += reach;
    }
    // An empty view covers no memory, and its data may be null: no offset is
    // applied to it (a transposed empty array gave first + (-1) * stride, on
    // a null pointer: undefined, found by the differential tests under UBSan).
    if (shape.elements() == 0) {
      layout.first = 0;
      lowest = first;
      bytes = 0;
      return;
    }
    layout.first = -low;
    lowest = first + low;
    bytes = static_cast<std::size_t>(high - low + 1) * sizeof(E);
  }
};

/// A registered type that declares strides: its constructor has
/// `static std::array<index_t, max_rank> strides(const T&)` (element strides;
/// `data()` then points at element 0). Such a type is a view: accepted as an
/// argument and read through its strides, never a shared variable's type.
template <class V, class = void>
inline constexpr bool declares_strides_v = false;
template <class V>
inline constexpr bool
    declares_strides_v<V, std::void_t<decltype(shared_constructor<V>::strides(std::declval<const V&>()))>> =
        has_tensor_interface_v<V>;

/// The span of any strided argument: an xtensor view, or a registered type
/// that declares strides.
template <class V>
struct strided_value : strided_span<std::remove_cv_t<typename V::value_type>> {
  using element_type = std::remove_cv_t<typename V::value_type>;
  explicit strided_value(const V& v)
      : strided_span<element_type>(dims::from(v.shape()), v.strides(), v.data() + v.data_offset()) {}
};
template <class V>
  requires(declares_strides_v<V>)
struct strided_value<V> : strided_span<element_type_of<V>> {
  using element_type = element_type_of<V>;
  explicit strided_value(const V& v)
      : strided_span<element_type>(shared_constructor<V>::shape(v), shared_constructor<V>::strides(v),
                                   shared_constructor<V>::data(v)) {}
};
}  // namespace detail

/// Values a function or eval argument may be: registered tensors, and
/// strided views of memory.
template <class V>
concept argument_value = tensor_shareable<V> || detail::is_strided_argument_v<V>;

namespace detail {
/// Read through strides: xtensor views and registered types declaring strides.
template <class V>
inline constexpr bool strided_argument_v = is_strided_argument_v<V> || declares_strides_v<V>;
}  // namespace detail

}  // namespace fusor
