// fusor/eval.hpp — evaluating an expression once.
//
//   fusor::matrix<float> x{"x"};
//   auto W = fusor::shared(xt::xtensor<float, 2>(...), "W");
//   xt::xtensor<float, 2> y = fusor::eval(2.0f * x + fusor::exp(W), x = xv);
//   fusor::assign(W, W - 0.1f * x, x = xv);    // in place when that is safe
#pragma once

#include <string>
#include <tuple>
#include <type_traits>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "fusor/backend/cpu/lower.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/shared.hpp"

namespace fusor {

namespace detail {

/// Checks a value bound to input `in` and returns it as a view of T: as is when
/// the dtype matches, converted into the workspace when the conversion is a
/// safe upcast (R28), refused otherwise.
///
/// Shared by fusor::eval and compiled functions; `policy` carries In's strict
/// and allow_downcast, and a `scalar_source` (a C++ number) may also be stored
/// when its value converts exactly (R28.6c).
/// `who()` names the input in messages; it is called only on a refusal, so
/// that a steady-state call builds no string.
template <element T, int N, class Who>
cpu::leaf<T> bind_value(const input<T, N>& in, dtype source, const dims& shape, const void* data,
                        cpu::workspace& ws, const Who& who, cast_policy policy = {}, bool scalar_source = false) {
  if (shape.rank() != static_cast<std::size_t>(N))
    throw rank_error(who() + ": wrong number of dimensions: expected " + std::to_string(N) + ", got " +
                     std::to_string(shape.rank()) + " with shape " + shape.str());
  for (std::size_t d = 0; d < shape.rank(); ++d)
    if (in.broadcastable(d) && shape[d] != 1)
      throw shape_error(who() + ": axis " + std::to_string(d) + " is broadcastable and must have length 1; received shape " +
                        shape.str());
  if (!fits(shape, size_of(source))) throw shape_error(who() + ": received a value of " + too_large(shape, source));
  if (source == dtype_of<T>) return cpu::leaf<T>::contiguous(static_cast<const T*>(data), shape);
  return visit(source, [&](auto zero) {
    using S = decltype(zero);
    const std::size_t n = shape.elements();
    check_cast<T, S>(who(), static_cast<const S*>(data), n, scalar_source, policy);
    T* p = ws.allocate<T>(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = convert_element<T>(static_cast<const S*>(data)[i]);
    return cpu::leaf<T>::contiguous(p, shape);
  });
}

template <class... B>
class eval_context {
 public:
  eval_context(cpu::workspace& ws, const B&... b) : ws_(ws), bindings_(b...) {}
  cpu::workspace& ws() noexcept { return ws_; }

  template <element T, int N>
  cpu::leaf<T> bind(const input<T, N>& in) {
    const binding<T, N>* found = nullptr;
    std::apply(
        [&](const auto&... b) {
          (
              [&] {
                if constexpr (std::is_same_v<std::remove_cvref_t<decltype(b)>, binding<T, N>>)
                  if (!found && b.target.same_as(in)) found = &b;
              }(),
              ...);
        },
        bindings_);
    if (!found)
      throw value_error("fusor::eval: no value was given for input '" + in.str() + "' (bind one with " +
                        in.str() + " = value)");
    return bind_value(in, found->source_dtype, found->shape, found->data, ws_,
                      [&] { return "input '" + in.str() + "'"; });
  }

 private:
  cpu::workspace& ws_;
  std::tuple<const B&...> bindings_;
};

template <class R, int N>
struct eval_result {
  using type = xt::xtensor<R, static_cast<std::size_t>(N)>;
};
template <class R>
struct eval_result<R, 0> {
  using type = R;
};
template <class R>
struct eval_result<R, dynamic_rank> {
  using type = xt::xarray<R>;
};

}  // namespace detail

/// What fusor::eval returns for an expression: its element type for rank 0,
/// xt::xtensor<E, N> for a static rank, xt::xarray<E> otherwise.
template <expression X>
using eval_result_t = typename detail::eval_result<value_type_t<X>, rank_v<X>>::type;

/// Evaluates `expr` once into a fresh value, with `input = value` bindings.
template <class X, class... B>
  requires(expression<as_expression_t<X>>)
[[nodiscard]] auto eval(X&& x, const B&... bindings) {
  auto expr = as_expression(std::forward<X>(x));
  using Expr = decltype(expr);
  using R = value_type_t<Expr>;
  cpu::workspace ws;
  detail::eval_context<B...> ctx(ws, bindings...);
  auto ev = cpu::lower(expr, ctx);
  const dims shape = ev.shape();
  if constexpr (Expr::rank != dynamic_rank) {
    if (shape.rank() != static_cast<std::size_t>(Expr::rank))
      throw rank_error("fusor::eval(" + expr.str() + "): result has shape " + shape.str() + ", expected rank " +
                       std::to_string(Expr::rank));
  }
  using Result = eval_result_t<Expr>;
  ev.broadcast_to(shape);
  if constexpr (Expr::rank == 0) {
    R out{};
    cpu::run_elementwise(&out, shape, ev);
    return out;
  } else {
    typename Result::shape_type s{};
    if constexpr (Expr::rank == dynamic_rank) s.resize(shape.rank());
    for (std::size_t d = 0; d < shape.rank(); ++d) s[d] = shape[d];
    Result out(s);
    cpu::run_elementwise(out.data(), shape, ev);
    return out;
  }
}

namespace detail {
/// Whether every array leaf of `ev` that touches [lo, lo + bytes) reads it at
/// the very index being written (an elementwise, same-shape, same-layout read
/// of the destination itself). Partial overlaps and permuted or broadcast reads
/// are not safe (CUB's rule: exact coincidence only).
template <class Ev, class E>
bool safe_in_place(Ev& ev, const E* dest, const dims& shape) {
  const auto* lo = reinterpret_cast<const std::byte*>(dest);
  const auto* hi = lo + shape.elements() * sizeof(E);
  const auto contiguous = c_strides(shape);
  bool safe = true;
  ev.for_each_leaf([&](auto& l) {
    using L = typename std::remove_reference_t<decltype(l)>::value_type;
    const auto [a, b] = l.byte_range();
    if (!(a < hi && lo < b)) return;  // disjoint
    bool same = std::is_same_v<L, E> && static_cast<const void*>(l.data) == static_cast<const void*>(dest) &&
                l.view_shape == shape;
    for (std::size_t d = 0; same && d < shape.rank(); ++d) same = l.strides[d] == contiguous[d] || shape[d] == 1;
    safe = safe && same;
  });
  return safe;
}
}  // namespace detail

/// Evaluates `expr` into the shared variable `dest`. Writes into dest's buffer
/// in place when the result has dest's shape and dtype and every read of that
/// buffer is at the index being written; otherwise evaluates into fresh storage
/// and installs it (a resized destination, a transposed or broadcast read of
/// dest, a partial overlap with a borrowed buffer). Either way the result is
/// the one a separate temporary would give; on error dest is unchanged.
template <class T, class X, class... B>
  requires(tensor_shareable<T> && expression<as_expression_t<X>>)
void assign(shared<T>& dest, X&& x, const B&... bindings) {
  using E = element_type_of<T>;
  auto expr = as_expression(std::forward<X>(x));
  using R = value_type_t<decltype(expr)>;
  static_assert(rank_of<T> == dynamic_rank || rank_v<decltype(expr)> == dynamic_rank ||
                    rank_of<T> == rank_v<decltype(expr)>,
                "FUSOR_RANK_MISMATCH: fusor::assign: the expression's static rank differs from the destination "
                "variable's; a shared variable's rank never changes (reduce, reshape or index the expression)");
  auto& record = *dest.record();
  cpu::workspace ws;
  detail::eval_context<B...> ctx(ws, bindings...);
  auto ev = cpu::lower(expr, ctx);
  const dims shape = ev.shape();
  if (shape.rank() != record.rank())
    throw rank_error(record.describe() + ": cannot assign " + expr.str() + " of shape " + shape.str() +
                     " to a variable of rank " + std::to_string(record.rank()));
  for (std::size_t d = 0; d < shape.rank(); ++d)
    if (record.broadcastable(d) && shape[d] != 1)
      throw shape_error(record.describe() + ": axis " + std::to_string(d) +
                        " is broadcastable and must have length 1; " + expr.str() + " has shape " + shape.str());
  ev.broadcast_to(shape);
  if constexpr (std::is_same_v<R, E>) {
    if (record.has_value() && record.storage().shape() == shape && host_accessible(dest.space()) &&
        detail::safe_in_place(ev, record.storage().data(), shape)) {
      cpu::run_elementwise(record.storage().mutable_data(), shape, ev);
      record.written_in_place();
      return;
    }
    auto fresh = array<E>::allocate(shape, dest.space());
    cpu::run_elementwise(fresh.mutable_data(), shape, ev);
    record.install(std::move(fresh));
  } else {
    // Another dtype: the variable's casting rules decide (R28), as set_value.
    auto tmp = array<R>::allocate(shape);
    cpu::run_elementwise(tmp.mutable_data(), shape, ev);
    check_cast<E, R>(record.describe(), tmp.data(), tmp.size(), false,
                     cast_policy{dest.strict(), dest.allow_downcast()});
    auto fresh = array<E>::allocate(shape, dest.space());
    for (std::size_t i = 0; i < tmp.size(); ++i) fresh.mutable_data()[i] = convert_element<E>(tmp.data()[i]);
    record.install(std::move(fresh));
  }
}

}  // namespace fusor
