// fusor/compile/binding.hpp — checking the values a call is given, the same
// way for compiled functions and for fusor::eval / fusor::assign: the
// declared rank and broadcastable axes, a possible shape, the casting rules of
// the input (strict, allow_downcast, safe upcasts, the exact-value rule for
// C++ numbers), and which arguments the call may write. The result is the
// planner's view of an argument (input_facts); nothing is copied here — an
// argument of another dtype is converted by a step of the plan.
#pragma once

#include <string>
#include <type_traits>

#include "fusor/compile/plan.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/shared/cast.hpp"
#include "fusor/shared/constructor.hpp"
#include "fusor/shared/strided_argument.hpp"
#include "fusor/shared/variable.hpp"

namespace fusor {

/// Checks `value` for an input of element type T and rank N, with the
/// broadcastable axes `broadcastable` (bit d: axis d), and describes it in `a`
/// — written only where it changed, since most calls pass the same buffers as
/// the last one. `lent`: passed to In(x, borrow) as a non-const lvalue, so the
/// call may overwrite it (only when it has the input's dtype: a converted copy
/// would help nobody). `who()` names the input in messages; it is called only
/// on a refusal.
template <element T, int N, class V, class Who>
  requires(tensor_shareable<V> && !detail::strided_argument_v<V>)
void bind_argument(input_facts& a, std::uint32_t broadcastable, const V& value, cast_policy policy, bool lent,
                   const Who& who) {
  using C = shared_constructor<V>;
  using S = typename C::element_type;
  static_assert(rank_of<V> == dynamic_rank || rank_of<V> == N,
                "FUSOR_RANK_MISMATCH: an argument's static rank differs from its input's rank; pass a value of "
                "the input's rank (an xt::xarray's rank is checked at the call)");
  const dims shape = C::shape(value);
  require_shape(who, static_cast<std::size_t>(N), broadcastable, shape, dtype_of<S>);
  const S* src = C::data(value);
  const std::size_t n = shape.elements();
  const memory_space space = space_of(value);
  // A device array is read where it is: it must have the input's dtype (a
  // conversion would need the host to read it).
  if constexpr (!std::is_same_v<S, T>)
    if (!host_accessible(space))
      throw dtype_error(detail::who_text(who) + ": an argument on " + space.str() + " must have the input's dtype " +
                        std::string(name(dtype_of<T>)) + ", received " + std::string(name(dtype_of<S>)) +
                        "; convert it first (e.g. fusor::eval(fusor::cast<" + std::string(cpp_name(dtype_of<T>)) +
                        ">(...)) on the device)");
  // R28–R31: an exact dtype as is; otherwise only what the input's casting
  // rules accept (a C++ number: when its value converts exactly).
  check_cast<T, S>(who, src, n, std::is_arithmetic_v<V>, policy);
  const auto* data = reinterpret_cast<const std::byte*>(src);
  // Never a buffer a shared variable holds (M3: only fusor writes a variable's
  // storage, through its updates): e.g. the array of get_value(borrow, internal_type).
  // Nor a read-only view (get_value(borrow)), whoever holds its buffer now.
  constexpr bool read_only = requires { requires C::read_only; };
  const bool writable = lent && !read_only && std::is_same_v<S, T> && rank_of<V> != 0 &&
                        !variable_base::held_by_another(data, n * sizeof(S), nullptr);
  if (a.data != data || a.source != dtype_of<S> || a.writable != writable || !(a.shape == shape) ||
      a.space != space || a.layout.strided) {
    a.layout = strided_layout{};
    a.data = data;
    a.bytes = n * sizeof(S);
    a.source = dtype_of<S>;
    a.writable = writable;
    a.shape = shape;
    a.space = space;
  }
}

/// A strided argument (an xtensor view or adaptor, shared/strided_argument.hpp):
/// checked as any argument, described by its span and layout, never writable.
template <element T, int N, class V, class Who>
  requires(detail::strided_argument_v<V>)
void bind_argument(input_facts& a, std::uint32_t broadcastable, const V& value, cast_policy policy, bool,
                   const Who& who) {
  const detail::strided_value<V> s(value);
  using S = typename detail::strided_value<V>::element_type;
  require_shape(who, static_cast<std::size_t>(N), broadcastable, s.shape, dtype_of<S>);
  check_cast<T, S>(who, s.lowest, 0, false, policy);
  a.data = reinterpret_cast<const std::byte*>(s.lowest);
  a.bytes = s.bytes;
  a.source = dtype_of<S>;
  a.writable = false;
  a.shape = s.shape;
  a.space = host;
  a.layout = s.layout;
}

/// An argument that shares bytes with another argument is not written,
/// whatever the types (PyTensor #1026: two views of one buffer, one of them
/// lent, must not see each other change mid-call).
inline void unshare_writable(call_facts& f) noexcept {
  for (std::size_t i = 0; i < f.inputs.size(); ++i) {
    auto& a = f.inputs[i];
    if (!a.writable) continue;
    for (std::size_t j = 0; j < f.inputs.size(); ++j)
      if (j != i && relation(a.data, a.bytes, f.inputs[j].data, f.inputs[j].bytes) != overlap::none) {
        a.writable = false;
        break;
      }
  }
}

/// Every argument must be where the call runs — the host, or for a call on a
/// device, the host (copied in) or that device; and on a device, In(x, borrow)
/// aliases nothing: no argument is written.
inline void check_spaces(call_facts& f, const graph& g) {
  for (std::size_t i = 0; i < f.inputs.size(); ++i) {
    auto& a = f.inputs[i];
    if (f.backend == backend_id::device) a.writable = false;
    if (host_accessible(a.space) || a.space == f.space) continue;
    throw space_error("input " + std::to_string(i) + " ('" + g.inputs[i].name + "'): the argument is on " +
                      a.space.str() + ", but the call runs on " + f.space.str() +
                      (host_accessible(f.space) ? " (its shared variables are there): copy it to the host first, "
                                                  "e.g. with fusor::array::to(fusor::host)"
                                                : ": copy it there first, or to the host"));
  }
}

/// Reads the facts of every shared variable of a graph, as they are now.
inline void read_shared_facts(const graph& g, call_facts& f) {
  f.shared.resize(g.shared.size());
  for (std::size_t j = 0; j < g.shared.size(); ++j) f.shared[j] = g.shared[j].facts(g.shared[j].record);
}

}  // namespace fusor
