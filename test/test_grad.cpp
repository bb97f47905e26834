// fusor::grad — the elementwise nodes against central finite differences in
// double (Theano's verify_grad): the unary functions, arithmetic, pow and the
// selections, and the subgradients at ties and kinks. test_grad_reductions.cpp
// has the reductions, test_grad_shapes.cpp the other nodes that change shapes
// (dot, reshapes, broadcasting, casts); test_grad_sharing.cpp and test_grad_models.cpp gradients of whole
// models; test_grad_views.cpp and test_grad_joins.cpp the selections. (The
// node-by-node rules are three units so that each compiles in well under 2 GB
// with the sanitizers, as a user's test of this size would.)
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::vec;
using grad_check::verify_grad;

TEST_CASE("grad of the unary functions") {
  auto x = fusor::shared(vec(5, 0.2, 0.9), "x");  // inside every domain, away from kinks
  verify_grad(fusor::sum(fusor::exp(x)), x);
  verify_grad(fusor::sum(fusor::expm1(x)), x);
  verify_grad(fusor::sum(fusor::log(x)), x);
  verify_grad(fusor::sum(fusor::log1p(x)), x);
  verify_grad(fusor::sum(fusor::sqrt(x)), x);
  verify_grad(fusor::sum(fusor::sin(x)), x);
  verify_grad(fusor::sum(fusor::cos(x)), x);
  verify_grad(fusor::sum(fusor::tan(x)), x);
  verify_grad(fusor::sum(fusor::tanh(x)), x);
  verify_grad(fusor::sum(fusor::sigmoid(x)), x);
  verify_grad(fusor::sum(fusor::softplus(x)), x);
  verify_grad(fusor::sum(-x), x);
  auto s = fusor::shared(xt::xtensor<double, 1>{-0.7, 0.3, -0.2, 0.9}, "s");
  verify_grad(fusor::sum(fusor::abs(s) * s), s);
  verify_grad(fusor::sum(fusor::exp(fusor::sin(s) * fusor::tanh(s))), s);  // chains
}

TEST_CASE("grad of arithmetic, pow and the selections") {
  auto x = fusor::shared(vec(6, 0.5, 1.5, 3), "x");
  auto y = fusor::shared(vec(6, 0.5, 1.5, 4), "y");
  verify_grad(fusor::sum(x + y * 2 - 3), x);
  verify_grad(fusor::sum(x * y), y);
  verify_grad(fusor::sum(x / y), x);
  verify_grad(fusor::sum(x / y), y);
  verify_grad(fusor::sum(1 / x), x);
  verify_grad(fusor::sum(fusor::pow(x, 3)), x);
  verify_grad(fusor::sum(fusor::pow(x, y)), x);
  verify_grad(fusor::sum(fusor::pow(x, y)), y);
  verify_grad(fusor::sum(fusor::pow(2.0, x)), x);
  verify_grad(fusor::sum(fusor::maximum(x, y) * x), x);
  verify_grad(fusor::sum(fusor::maximum(x, y)), y);
  verify_grad(fusor::sum(fusor::minimum(x, y)), x);
  verify_grad(fusor::sum(fusor::minimum(x, y)), y);
  verify_grad(fusor::sum(fusor::fmax(x, y) + fusor::fmin(x, y) * 2), x);
  verify_grad(fusor::sum(fusor::clip(x, 0.8, 1.2) * y), x);
  verify_grad(fusor::sum(fusor::where(x > y, x * x, y * x)), x);
  verify_grad(fusor::sum(fusor::where(x > 1.0, x, 0.0)), x);
}

TEST_CASE("subgradients at ties and kinks, as documented") {
  auto x = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0, 0.0, -1.0}, "x");
  auto y = fusor::shared(xt::xtensor<double, 1>{1.0, 1.0, 3.0, -1.0}, "y");
  // maximum: the operand it returns gets the gradient; the first on a tie.
  const xt::xtensor<double, 1> gx = fusor::eval(fusor::grad(fusor::sum(fusor::maximum(x, y)), x));
  CHECK(gx == xt::xtensor<double, 1>{1, 1, 0, 1});
  const xt::xtensor<double, 1> gy = fusor::eval(fusor::grad(fusor::sum(fusor::maximum(x, y)), y));
  CHECK(gy == xt::xtensor<double, 1>{0, 0, 1, 0});
  // abs'(0) = 0
  const xt::xtensor<double, 1> ga = fusor::eval(fusor::grad(fusor::sum(fusor::abs(x)), x));
  CHECK(ga == xt::xtensor<double, 1>{1, 1, 0, -1});
  // clip: x inside [lo, hi], bounds included
  const xt::xtensor<double, 1> gc = fusor::eval(fusor::grad(fusor::sum(fusor::clip(x, 0.0, 1.0)), x));
  CHECK(gc == xt::xtensor<double, 1>{1, 0, 1, 0});
  // max: shared equally among ties
  auto t = fusor::shared(xt::xtensor<double, 1>{3.0, 1.0, 3.0, 2.0}, "t");
  const xt::xtensor<double, 1> gm = fusor::eval(fusor::grad(fusor::max(t), t));
  CHECK(gm == xt::xtensor<double, 1>{0.5, 0, 0.5, 0});
}
