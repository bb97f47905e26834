// fusor::grad where a model reads a variable or a sub-expression more than
// once: variables of one C++ type told apart (each gradient its own shape),
// one sub-expression type over three variables, a sub-expression used twice
// walked back once, and second derivatives (a Hessian-vector product against
// differences of the gradient). test_grad_models.cpp has the rest of the
// whole models.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::mat;
using grad_check::vec;
using grad_check::verify_grad;
using grad_check::verify_hessian_vector;

TEST_CASE("variables of one C++ type are told apart; each gradient has its own shape") {
  auto W1 = fusor::shared(mat(3, 4, -1, 1, 15), "W1");
  auto W2 = fusor::shared(mat(4, 2, -1, 1, 16), "W2");
  auto x = fusor::shared(mat(5, 3, -1, 1, 17), "x");
  const auto cost = fusor::sum(fusor::tanh(fusor::dot(fusor::tanh(fusor::dot(x, W1)), W2))) +
                    0.1 * fusor::sum(W1 * W1) + 0.1 * fusor::sum(W2 * W2);
  verify_grad(cost, W1);
  verify_grad(cost, W2);
  verify_grad(cost, x);  // the data too: it is a variable like the others
  auto [g1, g2] = fusor::grad(cost, W1, W2);
  const xt::xtensor<double, 2> v1 = fusor::eval(g1);
  const xt::xtensor<double, 2> v2 = fusor::eval(g2);
  CHECK(v1.shape()[0] == 3);
  CHECK(v1.shape()[1] == 4);
  CHECK(v2.shape()[0] == 4);
  CHECK(v2.shape()[1] == 2);
  // The other variable's contribution is a closed gate, a (1, 1) zero: it
  // must not pass for the target's exact shape when the target's own
  // contribution is smaller (a rank-0 one, broadcast up).
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(fusor::sum(W1) * 2.0 + fusor::sum(fusor::exp(fusor::transpose(W2))), W1));
  CHECK(g == xt::xtensor<double, 2>(2.0 * xt::ones<double>({3, 4})));
}

TEST_CASE("one sub-expression type over three variables: each value summed and walked below once") {
  auto x = fusor::shared(mat(5, 3, -1, 1, 30), "x");
  auto W1 = fusor::shared(mat(3, 4, -1, 1, 31), "W1");
  auto W2 = fusor::shared(mat(3, 4, -1, 1, 32), "W2");
  auto W3 = fusor::shared(mat(3, 4, -1, 1, 33), "W3");
  const auto h1 = fusor::tanh(fusor::dot(x, W1));
  const auto h2 = fusor::tanh(fusor::dot(x, W2));
  const auto h3 = fusor::tanh(fusor::dot(x, W3));
  // tanh(dot(x, W)) is one C++ type with seven occurrences and three values,
  // the first occurrence of each value in another place of the cost.
  const auto cost = fusor::sum(h1 * h1) + fusor::sum(h2 * h1) + fusor::sum(h3 * h3) + fusor::sum(fusor::exp(h2) * h3);
  verify_grad(cost, W1);
  verify_grad(cost, W2);
  verify_grad(cost, W3);
  verify_grad(cost, x);
  auto [g1, g2, g3] = fusor::grad(cost, W1, W2, W3);
  auto f = fusor::function(fusor::inputs(), fusor::outputs(g1, g2, g3));
  f();
  const std::string plan = f.plan();
  std::size_t dots = 0;
  for (std::size_t at = plan.find(" dot "); at != std::string::npos; at = plan.find(" dot ", at + 1)) ++dots;
  CHECK(dots == 6);  // three forward dots, and one backward dot per variable
}

TEST_CASE("a sub-expression used twice is walked back once: one backward dot") {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto w = fusor::shared(vec(4, -1, 1, 18), "w");
  const auto p = fusor::sigmoid(fusor::dot(x, w));
  const auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p));
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::grad(cost, w)));
  const xt::xtensor<double, 2> xv = mat(6, 4, -1, 1, 19);
  const xt::xtensor<double, 1> yv{0, 1, 1, 0, 1, 0};
  const xt::xtensor<double, 1> g = f(xv, yv);
  // against the hand-written gradient x^T (p - y) / n
  const xt::xtensor<double, 1> pv = fusor::eval(p, x = xv);
  xt::xtensor<double, 1> hand = xt::zeros<double>({4});
  for (std::size_t j = 0; j < 4; ++j)
    for (std::size_t i = 0; i < 6; ++i) hand(j) += xv(i, j) * (pv(i) - yv(i)) / 6;
  CHECK(xt::allclose(g, hand, 1e-12, 1e-14));
  const std::string plan = f.plan();
  std::size_t dots = 0;
  for (std::size_t at = plan.find(" dot "); at != std::string::npos; at = plan.find(" dot ", at + 1)) ++dots;
  CHECK(dots == 2);  // the forward dot and one backward dot
}

TEST_CASE("second derivatives: a Hessian-vector product against differences of the gradient") {
  auto w = fusor::shared(vec(4, -1, 1, 20), "w");
  auto v = fusor::shared(vec(4, -1, 1, 21), "v");
  auto A = fusor::shared(mat(5, 4, -1, 1, 22), "A");
  const auto cost = fusor::sum(fusor::log1p(fusor::exp(fusor::dot(A, w)))) + fusor::sum(w * w * w) / 3;
  const auto gw = fusor::grad(cost, w);
  verify_hessian_vector(gw, w, v);  // H v
  // and a second derivative of a scalar function, exactly: d2/dx2 fusor::sum(x^3) = 6x
  auto x = fusor::shared(xt::xtensor<double, 1>{1.0, -2.0}, "x");
  const xt::xtensor<double, 1> d2 = fusor::eval(fusor::grad(fusor::sum(fusor::grad(fusor::sum(x * x * x), x)), x));
  CHECK(xt::allclose(d2, xt::xtensor<double, 1>{6.0, -12.0}));
}
