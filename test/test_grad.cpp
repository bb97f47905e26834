// fusor::grad — every differentiable node against central finite differences
// in double (Theano's verify_grad), broadcasting summed back at run time, cast
// and symbolic inputs. test_grad_models.cpp has gradients of whole models
// (variables of one type, shared sub-expressions, second derivatives, the
// refusals, the perceptron); test_grad_views.cpp and test_grad_joins.cpp the
// selections.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::mat;
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
