// fusor::grad — every differentiable node against central finite differences
// in double (Theano's verify_grad), broadcasting summed back at run time,
// second derivatives, shared sub-expressions walked once, variables of one
// C++ type told apart, and the refusals.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

namespace {

using grad_check::verify_grad;
using grad_check::verify_hessian_vector;

xt::xtensor<double, 1> vec(std::size_t n, double lo = -1, double hi = 1, int seed = 1) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({n}, lo, hi);
}
xt::xtensor<double, 2> mat(std::size_t m, std::size_t n, double lo = -1, double hi = 1, int seed = 2) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({m, n}, lo, hi);
}

}  // namespace

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

TEST_CASE("grad of the reductions, over all axes, one axis, several, with keepdims") {
  auto A = fusor::shared(mat(3, 4, 0.5, 1.5, 5), "A");
  verify_grad(fusor::sum(A * A), A);
  verify_grad(fusor::mean(A * A), A);
  verify_grad(fusor::sum(fusor::exp(fusor::sum(A, 0))), A);
  verify_grad(fusor::sum(fusor::exp(fusor::mean(A, 1))), A);
  verify_grad(fusor::sum(fusor::exp(fusor::sum(A, -1, fusor::keepdims)) * A), A);
  verify_grad(fusor::sum(fusor::exp(fusor::mean(A, {0, 1}))), A);
  verify_grad(fusor::sum(fusor::sin(fusor::prod(A, 1))), A);
  verify_grad(fusor::prod(A), A);
  verify_grad(fusor::sum(fusor::max(A, 0) * 2), A);
  verify_grad(fusor::sum(fusor::exp(fusor::min(A, 1))), A);
  verify_grad(fusor::max(A) + fusor::min(A), A);
  verify_grad(fusor::sum(fusor::max(A, 1, fusor::keepdims) * A), A);
  verify_grad(fusor::nansum(A * A), A);
  verify_grad(fusor::sum(fusor::exp(fusor::nanmean(A, 0))), A);
  verify_grad(fusor::sum(fusor::nanmax(A, 1) * 3) + fusor::nanmin(A), A);
}

TEST_CASE("NaN-ignoring reductions: a NaN gets no gradient, the others as without it") {
  const double nan = std::nan("");
  auto x = fusor::shared(xt::xtensor<double, 1>{1.0, nan, 3.0, 2.0}, "x");
  const xt::xtensor<double, 1> gs = fusor::eval(fusor::grad(fusor::nansum(x) * 3.0, x));
  CHECK(gs == xt::xtensor<double, 1>{3.0, 0.0, 3.0, 3.0});
  // (through x * x the NaN element's 0 meets the local derivative 2 * NaN: NaN, as the chain rule has it)
  const xt::xtensor<double, 1> gm = fusor::eval(fusor::grad(fusor::nanmean(x), x));  // 3 numbers
  CHECK(xt::allclose(gm, xt::xtensor<double, 1>{1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3}));
  const xt::xtensor<double, 1> gx = fusor::eval(fusor::grad(fusor::nanmax(x) - fusor::nanmin(x), x));
  CHECK(gx == xt::xtensor<double, 1>{-1.0, 0.0, 1.0, 0.0});
}

TEST_CASE("grad of prod with zeros: the product of the others, never a division by zero") {
  auto z = fusor::shared(xt::xtensor<double, 1>{2.0, 0.0, 3.0, 4.0}, "z");
  const xt::xtensor<double, 1> g1 = fusor::eval(fusor::grad(fusor::prod(z), z));
  CHECK(g1 == xt::xtensor<double, 1>{0, 24, 0, 0});
  z.set_value(xt::xtensor<double, 1>{2.0, 0.0, 0.0, 4.0});
  const xt::xtensor<double, 1> g2 = fusor::eval(fusor::grad(fusor::prod(z), z));
  CHECK(g2 == xt::xtensor<double, 1>{0, 0, 0, 0});
  z.set_value(xt::xtensor<double, 1>{0.5, 2.0, -1.5, 4.0});
  verify_grad(fusor::prod(z), z);
}

TEST_CASE("grad of dot in all its forms, transpose and reshape") {
  auto A = fusor::shared(mat(3, 4, -1, 1, 7), "A");
  auto B = fusor::shared(mat(4, 2, -1, 1, 8), "B");
  auto u = fusor::shared(vec(4, -1, 1, 9), "u");
  auto v = fusor::shared(vec(3, -1, 1, 10), "v");
  verify_grad(fusor::dot(u, u * 2), u);                      // vector . vector
  verify_grad(fusor::sum(fusor::tanh(fusor::dot(A, u))), A);        // matrix . vector
  verify_grad(fusor::sum(fusor::tanh(fusor::dot(A, u))), u);
  verify_grad(fusor::sum(fusor::tanh(fusor::dot(v, A))), v);        // vector . matrix
  verify_grad(fusor::sum(fusor::tanh(fusor::dot(v, A))), A);
  verify_grad(fusor::sum(fusor::sin(fusor::dot(A, B))), A);         // matrix . matrix
  verify_grad(fusor::sum(fusor::sin(fusor::dot(A, B))), B);
  verify_grad(fusor::sum(fusor::sin(fusor::dot(fusor::transpose(B), fusor::transpose(A)))), A);
  verify_grad(fusor::sum(fusor::transpose(A) * fusor::cos(fusor::transpose(A))), A);
  auto T3 = fusor::shared(xt::xtensor<double, 3>(xt::random::rand<double>({2, 3, 4})), "T3");
  auto W3 = fusor::shared(xt::xtensor<double, 3>(xt::random::rand<double>({4, 2, 3})), "W3");
  verify_grad(fusor::sum(fusor::transpose(T3, {2, 0, 1}) * W3), T3);
  verify_grad(fusor::sum(fusor::sin(fusor::reshape(A, {2, -1})) * fusor::reshape(A, {2, 6})), A);
}

TEST_CASE("broadcasting is summed back, at run time where only the shapes say so") {
  auto M = fusor::shared(mat(3, 4, -1, 1, 11), "M");
  auto row = fusor::shared(vec(4, -1, 1, 12), "row");                       // (4,) against (3, 4)
  auto col = fusor::shared(xt::xtensor<double, 2>(mat(3, 1, -1, 1, 13)), "col");  // (3, 1): a length-1 axis
  auto s = fusor::shared(xt::xtensor<double, 0>(0.5), "s");
  verify_grad(fusor::sum(fusor::sin(M + row)), row);
  verify_grad(fusor::sum(fusor::sin(M * col)), col);
  verify_grad(fusor::sum(fusor::sin(M - s) * s), s);
  verify_grad(fusor::sum(fusor::exp(row * col)), row);  // (4,) x (3, 1) -> (3, 4)
  verify_grad(fusor::sum(fusor::exp(row * col)), col);
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(M + row), row));
  CHECK(g == xt::xtensor<double, 1>{3, 3, 3, 3});
}

TEST_CASE("cast, float32 targets and symbolic inputs") {
  auto w = fusor::shared(xt::xtensor<float, 1>{0.5f, -1.0f, 2.0f}, "w");
  const auto cost = fusor::sum(fusor::cast<double>(w) * fusor::cast<double>(w));  // a double cost of a float variable
  const auto g = fusor::grad(cost, w);
  static_assert(std::is_same_v<fusor::value_type_t<decltype(g)>, float>);
  const xt::xtensor<float, 1> gv = fusor::eval(g);
  CHECK(gv == xt::xtensor<float, 1>{1.0f, -2.0f, 4.0f});
  fusor::vector<double> x{"x"};
  auto c = fusor::shared(vec(3, -1, 1, 14), "c");
  const auto gx = fusor::grad(fusor::sum(fusor::sin(x) * c), x);
  const xt::xtensor<double, 1> xv{0.1, 0.2, 0.3};
  const xt::xtensor<double, 1> got = fusor::eval(gx, x = xv);
  const xt::xtensor<double, 1> want = xt::cos(xv) * c.get_value();
  CHECK(xt::allclose(got, want));
}

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
  // through an edge pad: refused, naming the node (test_grad_selections.cpp has the selections)
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
