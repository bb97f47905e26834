// fusor::grad of whole models: variables of one C++ type told apart, a
// sub-expression used twice walked back once, second derivatives, the
// gradient as an update, stop_gradient and the refusals, and a two-layer
// perceptron against hand-written backpropagation. test_grad.cpp has the
// node-by-node rules.
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

TEST_CASE("the gradient is an expression: it prints, fuses, and trains as an update") {
  auto w = fusor::shared(xt::xtensor<double, 1>{3.0, -2.0}, "w");
  const auto g = fusor::grad(fusor::sum(w * w), w);
  CHECK(!g.str().empty());
  auto step = fusor::function(fusor::inputs(), fusor::outputs(fusor::sum(w * w)),
                              fusor::updates(fusor::update(w, w - 0.25 * g)));
  for (int i = 0; i < 3; ++i) (void)step();
  // w <- w - 0.25 * 2w = w / 2, three times
  CHECK(w.get_value() == xt::xtensor<double, 1>{0.375, -0.25});
}

TEST_CASE("stop_gradient, disconnected targets and nodes without a gradient") {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  auto u = fusor::shared(xt::xtensor<double, 1>{3.0, 4.0}, "u");
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(w * fusor::stop_gradient(w)), w));
  CHECK(g == xt::xtensor<double, 1>{1.0, 2.0});
  // u does not appear: Theano's disconnected input, refused
  CHECK_THROWS_AS((void)fusor::grad(fusor::sum(w * w), u), fusor::value_error);
  try {  // w only below stop_gradient; u, of w's type, is the differentiable path
    (void)fusor::grad(fusor::sum(fusor::stop_gradient(w) * u), w);
    FAIL("a target only below stop_gradient has no gradient");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("does not appear") != std::string::npos);
  }
  // through an edge pad: refused, naming the node (test_grad_views.cpp and test_grad_joins.cpp have the selections)
  try {
    (void)fusor::grad(fusor::sum(fusor::pad(w, 1, fusor::edge)) + fusor::sum(w * w), w);
    FAIL("an edge pad is not differentiated");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("edge pad") != std::string::npos);
  }
  // ...but another variable of w's type read through one is fine: d/dw sum(pad(u)) * sum(w) = 3+3+4+4
  const xt::xtensor<double, 1> g2 =
      fusor::eval(fusor::grad(fusor::sum(fusor::pad(u, 1, fusor::edge)) * fusor::sum(w), w));
  CHECK(g2 == xt::xtensor<double, 1>{14.0, 14.0});
}

TEST_CASE("a two-layer perceptron's gradients equal the hand-written backpropagation") {
  // 5 samples, 4 features, 3 hidden units (ReLU), 2 classes, softmax cross-entropy
  auto W1 = fusor::shared(mat(4, 3, -1, 1, 31), "W1");
  auto b1 = fusor::shared(vec(3, -0.1, 0.1, 32), "b1");
  auto W2 = fusor::shared(mat(3, 2, -1, 1, 33), "W2");
  auto b2 = fusor::shared(vec(2, -0.1, 0.1, 34), "b2");
  fusor::matrix<double> x{"x"}, y{"y"};
  const auto a1 = fusor::dot(x, W1) + b1;
  const auto h = fusor::maximum(a1, 0.0);
  const auto z = fusor::dot(h, W2) + b2;
  const auto log_p = fusor::log_softmax(z, 1);
  const auto cost = -fusor::mean(fusor::sum(y * log_p, 1));
  auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);
  // by hand
  const auto dz = (fusor::exp(log_p) - y) / 5.0;
  const auto da1 = fusor::where(a1 > 0.0, fusor::dot(dz, fusor::transpose(W2)), 0.0);
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(gW1, gb1, gW2, gb2, fusor::dot(fusor::transpose(x), da1),
                                                               fusor::sum(da1, 0), fusor::dot(fusor::transpose(h), dz),
                                                               fusor::sum(dz, 0)));
  const xt::xtensor<double, 2> xv = mat(5, 4, -1, 1, 35);
  const xt::xtensor<double, 2> yv{{1, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 0}};
  auto [g1, g2, g3, g4, h1, h2, h3, h4] = f(xv, yv);
  CHECK(xt::allclose(g1, h1, 1e-12, 1e-14));
  CHECK(xt::allclose(g2, h2, 1e-12, 1e-14));
  CHECK(xt::allclose(g3, h3, 1e-12, 1e-14));
  CHECK(xt::allclose(g4, h4, 1e-12, 1e-14));
  CHECK(xt::amax(xt::abs(h1))() > 0.0);  // the comparison is not of zeros
}
