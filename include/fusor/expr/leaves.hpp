// fusor/expr/leaves.hpp — the leaves of an expression: symbolic inputs
// (fusor::scalar<T>, vector<T>, matrix<T>, tensor<T, N>), shared variables,
// and C++ constants.
#pragma once

#include <atomic>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "fusor/core/dims.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/expr/node.hpp"
#include "fusor/shared.hpp"
#include "fusor/shared/strided_argument.hpp"

namespace fusor {

namespace detail {
FUSOR_RUNTIME std::uint64_t next_input_id() noexcept;

/// Identity and declared type of a symbolic input, shared by all its copies.
struct input_info {
  std::string name;
  std::uint64_t id;
  std::vector<bool> broadcastable;
};

/// A new input's identity, its pattern checked against its rank (one
/// function, not one per input type).
FUSOR_RUNTIME std::shared_ptr<const input_info> make_input_info(std::string name, std::vector<bool> broadcastable,
                                                                int rank);
}  // namespace detail

template <class T, int N>
struct binding;

/// A symbolic input of element type T and static rank N: a placeholder that
/// receives a value when the expression is evaluated or a function is called.
/// Copies of an input are the same input (they share an identity).
template <class T, int N>
class input : public expression_base {
  static_assert(element<T>,
                "FUSOR_NOT_A_NUMERIC_DTYPE: fusor inputs (scalar<T>, vector<T>, matrix<T>, tensor<T, N>) need a "
                "numeric element type: bool, std::int8_t..std::int64_t, std::uint8_t..std::uint64_t, float or double");
  static_assert(N >= 0 && static_cast<std::size_t>(N) <= max_rank,
                "fusor::tensor<T, N>: N must be between 0 and FUSOR_MAX_RANK");

 public:
  using value_type = T;
  static constexpr int rank = N;

  /// `broadcastable` fixes axes to length 1 (Theano's pattern); empty: none.
  explicit input(std::string name = {}, std::vector<bool> broadcastable = {})
      : info_(detail::make_input_info(FUSOR_MOVE(name), FUSOR_MOVE(broadcastable), N)) {}

  const std::string& name() const noexcept { return info_->name; }
  std::uint64_t id() const noexcept { return info_->id; }
  bool broadcastable(std::size_t axis) const noexcept {
    return axis < info_->broadcastable.size() && info_->broadcastable[axis];
  }
  bool same_as(const input& other) const noexcept { return info_ == other.info_; }

  std::string str() const { return info_->name.empty() ? "<input#" + std::to_string(info_->id) + ">" : info_->name; }

  /// `x = value` binds a value to this input in fusor::eval(expr, x = value).
  /// The binding refers to `value`, which must outlive the eval call.
  template <class V>
    requires argument_value<std::remove_cvref_t<V>>
  binding<T, N> operator=(const V& value) const;

  input(const input&) = default;
  input& operator=(const input&) = default;

 private:
  std::shared_ptr<const detail::input_info> info_;
};

template <class T>
using scalar = input<T, 0>;
template <class T>
using vector = input<T, 1>;
template <class T>
using matrix = input<T, 2>;
template <class T, int N>
using tensor = input<T, N>;

/// A value bound to an input for one evaluation: element type, shape and a
/// pointer to contiguous row-major data, plus the input's identity.
template <class T, int N>
struct binding {
  input<T, N> target;
  dtype source_dtype;
  dims shape;
  const void* data;
  memory_space space = host;  ///< where `data` is (a fusor::array may be on a device)
  /// A strided argument (an xtensor view): `data` is the lowest address it
  /// covers, `bytes` the span; otherwise contiguous and `bytes` unused.
  strided_layout layout{};
  std::size_t bytes = 0;
};

template <class T, int N>
template <class V>
  requires argument_value<std::remove_cvref_t<V>>
binding<T, N> input<T, N>::operator=(const V& value) const {
  if constexpr (!detail::strided_argument_v<V>) {
    using C = shared_constructor<V>;
    static_assert(C::rank == dynamic_rank || C::rank == N,
                  "fusor: the value bound to an input has a different static rank than the input");
    return binding<T, N>{*this, dtype_of<typename C::element_type>, C::shape(value), C::data(value), space_of(value)};
  } else {
    const detail::strided_value<V> s(value);
    return binding<T, N>{*this, dtype_of<typename detail::strided_value<V>::element_type>, s.shape, s.lowest, host,
                         s.layout, s.bytes};
  }
}

namespace detail {
/// A shared variable's C++ type, carried by a leaf as a value (the address of
/// this function), not as a type: see basic_shared_leaf. (A function, not a
/// variable template: nvcc's front end refuses a variable template's address
/// as a template argument in a dependent context.)
template <class T>
constexpr T* container_tag() noexcept {
  return nullptr;
}

/// What every shared variable's leaf is: the variable's handle, held by value;
/// the expression reads the variable's storage as it is when the expression
/// is evaluated. The leaf classes below name the variable's type in their
/// own ways and derive from this.
template <class T>
class shared_leaf_base : public expression_base {
 public:
  using variable_type = T;
  using value_type = element_type_of<T>;
  static constexpr int rank = rank_of<T>;

  explicit shared_leaf_base(shared<T> variable) : variable_(FUSOR_MOVE(variable)) {}
  const shared<T>& variable() const noexcept { return variable_; }
  std::string str() const {
    return variable_.name().empty() ? "<shared#" + std::to_string(variable_.id()) + ">" : variable_.name();
  }

 private:
  shared<T> variable_;
};
}  // namespace detail

/// A shared variable as a leaf, its type T carried by a function pointer
/// (detail::container_tag<T>), not as a type. Spelled `shared_leaf<T>`
/// (below); an `xt::xtensor<E, N>` variable's leaf is tensor_leaf.
///
/// Why not a type: argument-dependent lookup of an operator over an
/// expression searches the namespaces of every *type* in the expression's
/// type, its nodes' template arguments included, and not those of a value
/// (nor those of a base class's template arguments). With `shared_leaf<
/// xt::xtensor<...>>` every `a + b` over fusor expressions also considered
/// xtensor's unconstrained operator templates, each refused by an enable_if
/// over the whole expression type; clang writes out each refused condition,
/// a gradient's type written out grows exponentially with its depth, and a
/// second-derivative test ran out of memory.
template <auto Tag>
class basic_shared_leaf : public detail::shared_leaf_base<std::remove_pointer_t<decltype(Tag())>> {
 public:
  using detail::shared_leaf_base<std::remove_pointer_t<decltype(Tag())>>::shared_leaf_base;
};

/// The leaf of the most common variable, an `xt::xtensor<E, N>`, named by its
/// element type and rank alone: `fusor::tensor_leaf<float, 2>`. A gradient's
/// type repeats its leaves thousands of times, and a debug build spells each
/// one out in full: `basic_shared_leaf<container_tag<xt::xtensor_container<
/// xt::uvector<float, std::allocator<float> >, 2, ...> > >` was 170
/// characters, and the leaves were half of a training unit's debug
/// information.
template <class E, std::size_t N>
class tensor_leaf : public detail::shared_leaf_base<xt::xtensor<E, N>> {
 public:
  using detail::shared_leaf_base<xt::xtensor<E, N>>::shared_leaf_base;
};

/// The leaf of a rank-0 variable of element type E (`fusor::shared(0.0)`, a
/// bias or a learning rate): `fusor::number_leaf<double>`, for the same
/// reason as tensor_leaf.
template <element E>
class number_leaf : public detail::shared_leaf_base<E> {
 public:
  using detail::shared_leaf_base<E>::shared_leaf_base;
};

namespace detail {
template <class T>
struct shared_leaf_of {
  using type = basic_shared_leaf<&container_tag<T>>;
};
template <element E>
struct shared_leaf_of<E> {
  using type = number_leaf<E>;
};
template <class E, std::size_t N>
struct shared_leaf_of<xt::xtensor<E, N>> {
  using type = tensor_leaf<E, N>;
};
}  // namespace detail

/// A shared variable of type T as a leaf (what `x + 1` holds for a
/// `fusor::shared<T> x`).
template <class T>
  requires tensor_shareable<T>
using shared_leaf = typename detail::shared_leaf_of<T>::type;

/// A constant: a number (below) or an array (after it), PyTensor's
/// pt.constant. `fusor::constant(v)` deduces which.
template <class E>
class constant;

/// A C++ arithmetic constant, held by value. In arithmetic with an array it is a
/// NumPy "weak" scalar (NEP 50): `2 * x` and `0.5f * x` keep x's dtype.
template <element E>
class constant<E> : public expression_base {
 public:
  using value_type = E;
  static constexpr int rank = 0;
  static constexpr bool weak = true;

  explicit constexpr constant(E v) noexcept : value_(v) {}
  constexpr E value() const noexcept { return value_; }
  std::string str() const {
    if constexpr (std::is_same_v<E, bool>) {
      return value_ ? "true" : "false";
    } else {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, +value_);
      return ec == std::errc() ? std::string(buf, end) : std::string("?");
    }
  }

 private:
  E value_;
};

/// Whether X is a shared variable's leaf (not an array constant, which
/// derives from one).
template <class X>
inline constexpr bool is_basic_shared_leaf_v = false;
template <auto Tag>
inline constexpr bool is_basic_shared_leaf_v<basic_shared_leaf<Tag>> = true;
template <class E, std::size_t N>
inline constexpr bool is_basic_shared_leaf_v<tensor_leaf<E, N>> = true;
template <element E>
inline constexpr bool is_basic_shared_leaf_v<number_leaf<E>> = true;

template <class T>
inline constexpr bool is_constant_v = false;
template <element E>
inline constexpr bool is_constant_v<constant<E>> = true;

namespace detail {
FUSOR_RUNTIME std::string next_constant_name();
}  // namespace detail

/// An array constant, PyTensor's `pt.constant(np_array)`:
///
///   auto table = fusor::constant(xt::xtensor<double, 1>{1, 2, 4});
///   auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * table));
///
/// It holds a copy of the array (taken here; later changes to the array are
/// not seen, and nothing aliases the copy), its dtype and shape those of the
/// array. In an expression it is a leaf that reads that copy: a shared
/// variable nobody else can reach, so nothing can update it, read as any
/// variable is (fused, viewed); a function running in another memory space
/// reads a copy of it there, made once. fusor::grad sends it no gradient.
template <class A>
  requires(!element<A> && tensor_shareable<A>)
class constant<A> : public shared_leaf<A> {
 public:
  explicit constant(const A& value) : shared_leaf<A>(shared<A>(value, copy, detail::next_constant_name())) {
    this->variable().record()->mark_constant(&tensor_variable<element_type_of<A>>::replicate);
  }
};

template <element E>
constant(E) -> constant<E>;
template <class A>
  requires(!element<std::remove_cvref_t<A>> && tensor_shareable<std::remove_cvref_t<A>>)
constant(A&&) -> constant<std::remove_cvref_t<A>>;

template <class T>
inline constexpr bool is_array_constant_v = false;
template <class A>
inline constexpr bool is_array_constant_v<constant<A>> = !element<A>;

/// Turns anything allowed in an expression into a node: nodes as they are,
/// shared<T> handles into shared_leaf, arithmetic values into constant.
template <class X>
auto as_expression(X&& x) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_array_constant_v<U>) return static_cast<const shared_leaf<typename U::variable_type>&>(x);
  else if constexpr (std::derived_from<U, expression_base>) return U(FUSOR_FORWARD(x));
  else if constexpr (is_shared_v<U>) return shared_leaf<typename U::value_type>(FUSOR_FORWARD(x));
  else if constexpr (element<U>) return constant<U>(x);
  else static_assert(std::is_void_v<X>, "fusor: this operand is not an expression, a shared variable or a number");
}

/// Whether X may appear as an operand of fusor's operators.
template <class X>
concept operand = std::derived_from<std::remove_cvref_t<X>, expression_base> || is_shared_v<std::remove_cvref_t<X>> ||
                  element<std::remove_cvref_t<X>>;

template <class X>
using as_expression_t = decltype(as_expression(std::declval<X>()));

/// as_expression(std::forward<X>(x)) for x declared `X&& x`, written as the
/// conversion it is (a node's copy or move, a leaf's or a constant's
/// constructor): a call of as_expression is a function instance named by the
/// operand's whole type, and a debug build spells out each such name.
#define FUSOR_AS_EXPRESSION(x) ::fusor::as_expression_t<decltype(x)>(FUSOR_FORWARD(x))

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/expr/impl/leaves.ipp"
#endif
