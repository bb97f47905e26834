// fusor/backend/cpu/evaluator.hpp — lowered expressions: the trivially
// copyable kernel trees the fused loops run (Eigen's evaluators). Leaves are
// raw strided views; no handle, no reference count, no allocation.
//
// Protocol of an evaluator Ev:
//   using value_type; static constexpr bool simd;     // vectorisable as is
//   static constexpr std::size_t leaves;              // array leaves below
//   template <class F> void for_each_leaf(F&&);       // visit array leaves
//   void set_outer(const index_t* idx, std::size_t n);// position the outer loop
//   value_type scalar(index_t i) const;               // element i of the row
//   template <class Mode> batch<value_type> load(index_t i) const;
//
// Only the loops' bodies (set_outer, scalar, load) are per evaluator type.
// What a loop decides once per plan — each leaf's strides against the
// loop's shape, the merged axes, vectorisation — reads and writes the array
// leaves alone: their common part, leaf_view, gathered into a table by
// one walk (for_each_leaf), and set up by ordinary functions (loop.hpp),
// compiled once instead of once per evaluator type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fusor/backend/cpu/simd.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/operand_tuple.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/shared/cast.hpp"

namespace fusor::cpu {

/// The strides of a view of shape `shape` (element strides `own`) read at the
/// indices of `out`, right-aligned: axes it lacks or has as 1 get stride 0.
inline void broadcast_strides(const dims& shape, const std::array<index_t, max_rank>& own, const dims& out,
                              std::array<index_t, max_rank>& strides) noexcept {
  const std::size_t r = out.rank(), lr = shape.rank();
  for (std::size_t d = 0; d < r; ++d) {
    if (d < r - lr) {
      strides[d] = 0;
    } else {
      const std::size_t ld = d - (r - lr);
      strides[d] = shape[ld] == 1 ? 0 : own[ld];
    }
  }
}

/// A batch built lane by lane from an evaluator's scalars (defined below).
template <class T, class C>
batch<T> load_lanes(const C& c, index_t i) noexcept;

/// What every array leaf has, whatever its element type: the view it reads
/// and its strides in the loop. The loops' set-up works on these alone
/// (loop.hpp: broadcast, merging axes, vectorisation, binding to memory).
struct leaf_view {
  const void* data = nullptr;
  int slot = -1;  ///< the plan's slot this leaf reads: data is bound from it at every call (-1: none)
  std::ptrdiff_t byte_offset = 0;  ///< where the view starts in the slot (a view's offset), in bytes
  dims view_shape;
  std::array<index_t, max_rank> view_strides{};  // element strides of the view itself
  std::array<index_t, max_rank> strides{};       // strides against the output index space
  index_t inner = 0;                             // strides[rank - 1] of the merged loop space
};

/// Points each array leaf it visits at its slot's memory for this call (a
/// class, not a lambda: loop.hpp's detail::append_leaf says why). Called
/// from each kernel's run, where the compiler sees both these stores and the
/// loop's reads of the same pointers: bound through a table instead, each
/// read waited for its store, and a small call was 10 % slower.
struct slot_binder {
  void* const* slots;
  void operator()(leaf_view& l) const noexcept {
    if (l.slot >= 0)  // an index leaf reads no memory
      l.data = static_cast<const std::byte*>(slots[l.slot]) + l.byte_offset;
  }
};
template <class Ev>
inline void bind(Ev& ev, void* const* slots) noexcept {
  ev.for_each_leaf(slot_binder{slots});
}

/// A strided view of memory: the lowered form of every array leaf (inputs,
/// shared variables, materialised temporaries, transposed views).
template <class E>
struct leaf : leaf_view {
  using value_type = E;
  static constexpr bool simd = simd_lane<E>;
  static constexpr std::size_t leaves = 1;

  const E* cur = nullptr;

  template <class F>
  void for_each_leaf(F&& f) {
    f(static_cast<leaf_view&>(*this));
  }
  void set_outer(const index_t* idx, std::size_t n) noexcept {
    const E* p = static_cast<const E*>(data);
    for (std::size_t d = 0; d < n; ++d) p += idx[d] * strides[d];
    cur = p;
  }
  E scalar(index_t i) const noexcept { return cur[i * inner]; }
  template <class Mode>
  batch<E> load(index_t i) const noexcept {
    // Without the dense mode's promise, a leaf may be broadcast along the row
    // or, in a reduction over short rows run along its kept axis
    // (reduce.hpp), step by any stride: then it is read lane by lane.
    if constexpr (!is_dense_v<Mode>) {
      if (inner == 0) return batch<E>(*cur);
      if (inner != 1) return load_lanes<E>(*this, i);
    }
    return batch<E>::load(cur + i, xsimd_mode_t<Mode>{});
  }
  /// A bool array as the lanes of a mask over batches of T (where's condition).
  template <class Mode, class T>
  xsimd::batch_bool<T> load_mask(index_t i) const noexcept
    requires std::is_same_v<E, bool>
  {
    if constexpr (!is_dense_v<Mode>) {
      if (inner == 0) return xsimd::batch_bool<T>(*cur);
      if (inner != 1) {
        bool lane[batch<T>::size];
        for (std::size_t j = 0; j < batch<T>::size; ++j) lane[j] = cur[(i + static_cast<index_t>(j)) * inner];
        return mask_from_bytes<T>(lane);
      }
    }
    return mask_from_bytes<T>(cur + i);
  }
};

/// The flat index of each element in a constructor's own shape (iota_node):
/// strided like a leaf (its strides are the shape's row-major strides,
/// broadcast like any operand's), but it reads no memory — the position is
/// the value. Scalar only: constructors feed the scalar loop.
struct index_leaf : leaf_view {  // slot -1: bound to no memory
  using value_type = std::int64_t;
  static constexpr bool simd = false;
  static constexpr std::size_t leaves = 1;  // it takes part in merging axes

  index_t position = 0;

  template <class F>
  void for_each_leaf(F&& f) {
    f(static_cast<leaf_view&>(*this));
  }
  void set_outer(const index_t* idx, std::size_t n) noexcept {
    index_t p = 0;
    for (std::size_t d = 0; d < n; ++d) p += idx[d] * strides[d];
    position = p;
  }
  std::int64_t scalar(index_t i) const noexcept { return position + i * inner; }
};

/// A constant: broadcast everywhere, converted once to the type it is used at.
template <class E>
struct scalar_leaf {
  using value_type = E;
  static constexpr bool simd = true;
  static constexpr std::size_t leaves = 0;
  E value;
  template <class F>
  void for_each_leaf(F&&) {}
  void set_outer(const index_t*, std::size_t) noexcept {}
  E scalar(index_t) const noexcept { return value; }
  template <class Mode, class B = batch<E>>
  B load(index_t) const noexcept {
    return B(value);
  }
  template <class Mode, class T>
  xsimd::batch_bool<T> load_mask(index_t) const noexcept
    requires std::is_same_v<E, bool>
  {
    return xsimd::batch_bool<T>(value);
  }
};

template <class T>
inline constexpr bool is_scalar_leaf_v = false;
template <class E>
inline constexpr bool is_scalar_leaf_v<scalar_leaf<E>> = true;

/// The comparisons: their batch form is a mask (xsimd's batch_bool).
template <class F>
inline constexpr bool is_comparison_v =
    std::is_same_v<F, fn::equal> || std::is_same_v<F, fn::not_equal> || std::is_same_v<F, fn::less> ||
    std::is_same_v<F, fn::less_equal> || std::is_same_v<F, fn::greater> || std::is_same_v<F, fn::greater_equal>;

/// The operations whose batch form is xsimd's algorithm rather than the C
/// library's: sin and std::sin may differ in the last bit. A fused loop
/// computes most elements as batches and the rest (a row's tail, a kernel
/// that does not vectorise, such as a comparison's bool result) as scalars,
/// so each element's value would depend on where it fell: `x == max(x)` with
/// x = sin(w * w) found no maximum when the reduction and the comparison
/// computed it on different paths, and the gradient of max divided by that
/// count of zero (found by the differential tests). The scalars of these
/// operations are therefore computed by the batch algorithm too (one batch,
/// its first lane): every element of a float type gets one value, wherever
/// it is computed on the host. (pow's batch form calls the C library lane by
/// lane: fn::power says why; sqrt and the arithmetic are correctly rounded
/// either way.)
template <class F>
inline constexpr bool batch_algorithm_v =
    std::is_same_v<F, fn::sin_op> || std::is_same_v<F, fn::cos_op> || std::is_same_v<F, fn::tan_op> ||
    std::is_same_v<F, fn::exp_op> || std::is_same_v<F, fn::expm1_op> || std::is_same_v<F, fn::log_op> ||
    std::is_same_v<F, fn::log1p_op> || std::is_same_v<F, fn::tanh_op> || std::is_same_v<F, fn::sigmoid> ||
    std::is_same_v<F, fn::softplus>;

/// Whether a child evaluates, vectorised, to batches of T.
template <class C, class T>
inline constexpr bool batches_of_v =
    C::simd && (is_scalar_leaf_v<C> || std::is_same_v<typename C::value_type, T>);

/// Whether a bool-valued evaluator yields SIMD masks over batches of T: a bool
/// array, a bool constant, or a comparison of T operands. This is what lets
/// where(mask, a, b) vectorise.
template <class Ev, class T>
inline constexpr bool mask_of_v = false;
template <class T>
inline constexpr bool mask_of_v<leaf<bool>, T> = simd_element<T>;
template <class T>
inline constexpr bool mask_of_v<scalar_leaf<bool>, T> = simd_element<T>;

/// The operations with an exact batch form on integer lanes R: xsimd's integer
/// add, subtract and negate wrap modulo 2^n as fusor's integers do; 32-bit
/// multiply is one instruction (64-bit has none before AVX-512 and stays
/// scalar). Division, pow, abs, the selections and the math functions have no
/// such form and run the scalar loop.
template <class F, class R>
inline constexpr bool integer_batch_op_v =
    simd_integer<R> && (std::is_same_v<F, fn::plus> || std::is_same_v<F, fn::minus> ||
                        std::is_same_v<F, fn::negate> || (std::is_same_v<F, fn::multiplies> && sizeof(R) == 4));

template <class F, class R, class Casts, class... Children>
struct map_eval;
template <class F, class T, class A, class B>
inline constexpr bool mask_of_v<map_eval<F, bool, type_list<T, T>, A, B>, T> =
    simd_element<T> && is_comparison_v<F> && batches_of_v<A, T> && batches_of_v<B, T>;

template <class F, class R, class... Casts, class... Children>
struct map_eval<F, R, type_list<Casts...>, Children...> {
  using value_type = R;
  static constexpr bool is_where = std::is_same_v<F, fn::where>;
  // Vectorised when everything is one float type: every child already is the
  // type it is cast to (constants convert themselves), and the result too;
  // where's bool condition as a mask over that type.
  static constexpr bool simd = [] {
    if constexpr (is_where) {
      using Cond = std::tuple_element_t<0, std::tuple<Children...>>;
      using A = std::tuple_element_t<1, std::tuple<Children...>>;
      using B = std::tuple_element_t<2, std::tuple<Children...>>;
      return simd_element<R> && mask_of_v<Cond, R> && batches_of_v<A, R> && batches_of_v<B, R>;
    } else {
      return (simd_element<R> || integer_batch_op_v<F, R>) &&
             ((std::is_same_v<Casts, R> && batches_of_v<Children, R>) && ...);
    }
  }();
  static constexpr std::size_t leaves = (Children::leaves + ... + 0);

  fusor::detail::operand_tuple<Children...> children;

  // Walks over the children expand their indices in place (core/operand_tuple.hpp,
  // indices_of, says why not apply()).
  static constexpr auto all = std::index_sequence_for<Children...>{};

  // The leaf walk spells out one and two children, as the per-element
  // members below do: a lambda over the indices is a closure that an
  // unoptimised build makes in every evaluator type's walk, and that
  // AddressSanitizer instruments (the walk was 2.5 times its size there).
  template <class G>
  void for_each_leaf(G&& g) {
    if constexpr (sizeof...(Children) == 1) {
      child<0>().for_each_leaf(g);
    } else if constexpr (sizeof...(Children) == 2) {
      child<0>().for_each_leaf(g);
      child<1>().for_each_leaf(g);
    } else {
      [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA { (child<K>().for_each_leaf(g), ...); }(all);
    }
  }
  // (set_outer, called for every row, keeps the lambda: spelled out, g++
  // inlined a gradient's rows' set_outer less often at -O2.)
  void set_outer(const index_t* idx, std::size_t n) noexcept {
    [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA { (child<K>().set_outer(idx, n), ...); }(all);
  }
  // The per-element members (scalar, load, load_mask) spell out one and two
  // operands instead of expanding indices in a lambda: they are the loops'
  // bodies, and each lambda was one more call level that GCC's inliner gave
  // up on in a gradient's deep trees (an update's load was an outlined call
  // per batch). The lambdas of the general case are folded now
  // (FUSOR_FOLDED_LAMBDA), which may make the spelled-out cases redundant;
  // they stay until the run-time benchmarks say so.
  R scalar(index_t i) const noexcept {
    using C = std::tuple<Casts...>;  // named for its elements' types only
    if constexpr (sizeof...(Children) == 1) {
      using T = std::tuple_element_t<0, C>;
      if constexpr (batch_algorithm_v<F> && simd_element<T>)
        return static_cast<R>(F{}(batch<T>(convert_element<T>(child<0>().scalar(i)))).get(0));
      else
        return static_cast<R>(F{}(convert_element<T>(child<0>().scalar(i))));
    } else if constexpr (sizeof...(Children) == 2) {
      return static_cast<R>(
          F{}(convert_element<std::tuple_element_t<0, C>>(child<0>().scalar(i)), convert_element<std::tuple_element_t<1, C>>(child<1>().scalar(i))));
    } else {
      return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        return static_cast<R>(F{}(convert_element<Casts>(child<K>().scalar(i))...));
      }(all);
    }
  }
  template <class Mode>
  batch<R> load(index_t i) const noexcept {
    if constexpr (is_where) {
      return xsimd::select(child<0>().template load_mask<Mode, R>(i), load_child<Mode>(child<1>(), i),
                           load_child<Mode>(child<2>(), i));
    } else if constexpr (simd_integer<R> && std::is_signed_v<R>) {
      // Signed lanes are computed as unsigned ones: the same bits (two's
      // complement wrapping), and no signed overflow where xsimd falls back to
      // scalar code (32-bit multiply before SSE4.1).
      using U = std::make_unsigned_t<R>;
      return xsimd::bitwise_cast<batch<R>>([&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        return F{}(xsimd::bitwise_cast<batch<U>>(load_child<Mode>(child<K>(), i))...);
      }(all));
    } else if constexpr (sizeof...(Children) == 1) {
      return F{}(load_child<Mode>(child<0>(), i));
    } else if constexpr (sizeof...(Children) == 2) {
      return F{}(load_child<Mode>(child<0>(), i), load_child<Mode>(child<1>(), i));
    } else {
      return [&]<std::size_t... K>(std::index_sequence<K...>) FUSOR_FOLDED_LAMBDA {
        return F{}(load_child<Mode>(child<K>(), i)...);
      }(all);
    }
  }
  /// A comparison as a mask over batches of T (the condition of a where).
  template <class Mode, class T>
  xsimd::batch_bool<T> load_mask(index_t i) const noexcept
    requires(std::is_same_v<R, bool> && is_comparison_v<F>)
  {
    return F{}(load_operand<Mode, T>(child<0>(), i), load_operand<Mode, T>(child<1>(), i));
  }

  template <std::size_t K>
  FUSOR_PLUMBING auto& child() noexcept {
    return fusor::detail::get<K>(children);
  }
  template <std::size_t K>
  FUSOR_PLUMBING const auto& child() const noexcept {
    return fusor::detail::get<K>(children);
  }

 private:
  template <class Mode, class T, class C>
  static batch<T> load_operand(const C& c, index_t i) noexcept {
    if constexpr (is_scalar_leaf_v<C>) return batch<T>(static_cast<T>(c.value));
    else return c.template load<Mode>(i);
  }

  template <class Mode, class C>
  static batch<R> load_child(const C& c, index_t i) noexcept {
    if constexpr (is_scalar_leaf_v<C>) return batch<R>(static_cast<R>(c.value));
    else return c.template load<Mode>(i);
  }
};

/// A batch of T built lane by lane from an evaluator without a batch form:
/// what lets the vector loop go on around a small scalar part (a one-hot's
/// integer comparison, a gradient's closed contribution) instead of the whole
/// fused loop falling back to scalar code. Each lane is the element the scalar
/// loop would compute, converted as it would be.
template <class T, class C>
batch<T> load_lanes(const C& c, index_t i) noexcept {
  constexpr std::size_t w = batch<T>::size;
  alignas(batch<T>::arch_type::alignment()) T lane[w];
  for (std::size_t j = 0; j < w; ++j) lane[j] = convert_element<T>(c.scalar(i + static_cast<index_t>(j)));
  return batch<T>::load_aligned(lane);
}

/// A gate (expr/shape_like.hpp): its child when open; a closed gate's child
/// is default-built (no slot, no shape: it broadcasts as a scalar and binds
/// nothing) and never read. Vectorised whatever the child: a closed gate is a
/// zero of any width, and an open one without a batch form is loaded lane by
/// lane. (A gradient's gates close the contributions of the other variables of
/// the target's C++ type; their subtrees often have no batch form, and a gate
/// that followed its child would keep the whole reduction of, say, a bias's
/// gradient scalar: 130 us where 5 suffice for a (64, 128) sum.)
template <class Child>
struct gate_eval {
  using value_type = typename Child::value_type;
  static constexpr bool simd = Child::simd || simd_element<value_type>;
  static constexpr std::size_t leaves = Child::leaves;
  Child child;
  bool open = false;
  /// A closed gate's leaves are never read: they take no part in
  /// broadcasting, merging axes, binding or the loop's checks (a leaf that no
  /// one set up would look broadcast and keep an update off its dense,
  /// aligned path).
  template <class G>
  void for_each_leaf(G&& g) {
    if (open) child.for_each_leaf(g);
  }
  void set_outer(const index_t* idx, std::size_t n) noexcept {
    if (open) child.set_outer(idx, n);
  }
  value_type scalar(index_t i) const noexcept { return open ? child.scalar(i) : value_type(0); }
  template <class Mode>
  batch<value_type> load(index_t i) const noexcept {
    if (!open) return batch<value_type>(value_type(0));
    if constexpr (Child::simd) return child.template load<Mode>(i);
    else return load_lanes<value_type>(child, i);
  }
};

/// A conversion. Vectorised when the child already is T in batches, and into
/// a float type from anything else lane by lane (a one-hot's cast<float>(a ==
/// b) over integers: the float arithmetic around it stays vectorised).
template <class T, class Child>
struct cast_eval {
  using value_type = T;
  static constexpr bool same = std::is_same_v<T, typename Child::value_type> && Child::simd;
  static constexpr bool simd = same || simd_element<T>;
  static constexpr std::size_t leaves = Child::leaves;
  Child child;
  template <class G>
  void for_each_leaf(G&& g) {
    child.for_each_leaf(g);
  }
  void set_outer(const index_t* idx, std::size_t n) noexcept { child.set_outer(idx, n); }
  T scalar(index_t i) const noexcept { return convert_element<T>(child.scalar(i)); }
  template <class Mode>
  batch<T> load(index_t i) const noexcept {
    if constexpr (same) return child.template load<Mode>(i);
    else return load_lanes<T>(child, i);
  }
};

/// Whether an evaluator's scalar form computes a whole batch somewhere: an
/// operation of batch_algorithm_v, whose scalar is its batch's first lane.
/// Such a tree costs as much per element as per batch when it is run element
/// by element, so the loops run it in batches even where its leaves must be
/// read lane by lane (elementwise_loop's short rows); plain arithmetic, whose
/// scalar is one instruction, does not gain from that.
template <class Ev>
inline constexpr bool batch_per_scalar_v = false;
template <class F, class R, class Casts, class... Children>
inline constexpr bool batch_per_scalar_v<map_eval<F, R, Casts, Children...>> =
    (batch_algorithm_v<F> && simd_element<R>) || (batch_per_scalar_v<Children> || ...);
template <class Child>
inline constexpr bool batch_per_scalar_v<gate_eval<Child>> = batch_per_scalar_v<Child>;
template <class T, class Child>
inline constexpr bool batch_per_scalar_v<cast_eval<T, Child>> = batch_per_scalar_v<Child>;

}  // namespace fusor::cpu
