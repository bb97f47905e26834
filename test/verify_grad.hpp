// Theano's verify_grad for the gradient tests: fusor::grad(cost, w) against
// central finite differences of the cost, in double.
//
// Tolerance: |analytic - numeric| <= tol * (1 + max(|analytic|, |numeric|)),
// tol 1e-6, step h 1e-6 (truncation ~1e-12, rounding ~1e-10 relative to the
// cost).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>

#include <xtensor/xarray.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

namespace grad_check {

/// Uniform random data in [lo, hi), reproducible by seed: the gradient
/// suites' variables.
inline xt::xtensor<double, 1> vec(std::size_t n, double lo = -1, double hi = 1, int seed = 1) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({n}, lo, hi);
}
inline xt::xtensor<double, 2> mat(std::size_t m, std::size_t n, double lo = -1, double hi = 1, int seed = 2) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({m, n}, lo, hi);
}

/// The value of a rank-0 expression, as a double.
template <class E>
double value_of(const E& e) {
  const xt::xarray<double> v = fusor::eval(fusor::cast<double>(e));
  return v();
}

/// Central differences of the cost along each element of w (step h); w is
/// left as it was.
template <class Cost, class V>
xt::xarray<double> numeric_gradient(const Cost& cost, fusor::shared<V>& w, double h) {
  const V w0 = w.get_value();
  xt::xarray<double> numeric = xt::zeros<double>(w0.shape());
  for (std::size_t i = 0; i < w0.size(); ++i) {
    V plus = w0, minus = w0;
    plus.flat(i) += h;
    minus.flat(i) -= h;
    w.set_value(plus);
    const double cp = value_of(cost);
    w.set_value(minus);
    const double cm = value_of(cost);
    numeric.flat(i) = (cp - cm) / (2 * h);
  }
  w.set_value(w0);
  return numeric;
}

/// Checks fusor::grad(cost, w) element by element against central
/// differences of the cost; w is left as it was.
template <class Cost, class V>
void verify_grad(const Cost& cost, fusor::shared<V>& w, double h = 1e-6, double tol = 1e-6) {
  const xt::xarray<double> g = fusor::eval(fusor::cast<double>(fusor::grad(cost, w)));
  const V w0 = w.get_value();
  REQUIRE(g.shape().size() == w0.shape().size());
  for (std::size_t d = 0; d < w0.dimension(); ++d) REQUIRE(g.shape()[d] == w0.shape()[d]);
  const xt::xarray<double> numeric = numeric_gradient(cost, w, h);
  for (std::size_t i = 0; i < numeric.size(); ++i) {
    const double a = g.flat(i), n = numeric.flat(i);
    INFO("element ", i, " of ", w.name(), ": analytic ", a, ", numeric ", n);
    CHECK(std::abs(a - n) <= tol * (1 + std::max(std::abs(a), std::abs(n))));
  }
}

/// What a refused gradient claims ("w does not appear in the cost": w is read
/// only through comparisons or shapes), checked: the cost does not change
/// as any element of w moves.
template <class Cost, class V>
void verify_no_gradient(const Cost& cost, fusor::shared<V>& w, double h = 1e-6, double tol = 1e-6) {
  const xt::xarray<double> numeric = numeric_gradient(cost, w, h);
  INFO("the gradient for ", w.name(), " was refused; differences of the cost: ", numeric);
  CHECK(xt::amax(xt::abs(numeric))() <= tol);
}

/// Central differences of gw (a gradient expression) along v (step h); w is
/// left as it was.
template <class G, class V>
V gradient_difference(const G& gw, fusor::shared<V>& w, fusor::shared<V>& v, double h) {
  const V w0 = w.get_value();
  const V dir = v.get_value();
  w.set_value(V(w0 + h * dir));
  const V gp = fusor::eval(gw);
  w.set_value(V(w0 - h * dir));
  const V gm = fusor::eval(gw);
  w.set_value(w0);
  return V((gp - gm) / (2 * h));
}

/// Checks a Hessian-vector product — fusor::grad(sum(gw * v), w), gw the
/// gradient expression of some cost — against central differences of gw
/// along v (step 1e-5); w is left as it was.
template <class G, class V>
void verify_hessian_vector(const G& gw, fusor::shared<V>& w, fusor::shared<V>& v, double h = 1e-5) {
  const V got = fusor::eval(fusor::grad(fusor::sum(gw * v), w));
  const V numeric = gradient_difference(gw, w, v, h);
  CHECK(xt::allclose(got, numeric, 1e-6, 1e-8));
}

/// What a refused second derivative claims (the gradient reads w only
/// through comparisons or shapes: a cost linear in w, or piecewise so),
/// checked: the gradient does not change as w moves along v. (Where the
/// gradient itself is refused, verify_no_gradient checks the cost.)
template <class Cost, class V>
void verify_no_second_derivative(const Cost& cost, fusor::shared<V>& w, fusor::shared<V>& v, double h = 1e-5) {
  std::optional<decltype(fusor::grad(cost, w))> gw;
  try {
    gw.emplace(fusor::grad(cost, w));
  } catch (const fusor::error&) {
    return;
  }
  const V numeric = gradient_difference(*gw, w, v, h);
  INFO("the second derivative for ", w.name(), " was refused; differences of the gradient along v: ", numeric);
  CHECK(xt::amax(xt::abs(numeric))() <= 1e-8);
}

}  // namespace grad_check
