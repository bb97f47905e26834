// fusor::grad of the nodes that change shapes other than the reductions
// (test_grad_reductions.cpp), against central finite differences in double:
// dot in all its forms, transpose and reshape, broadcasting summed back (at
// run time where only the shapes say so), cast, float32 targets and symbolic
// inputs.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tuple>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::mat;
using grad_check::vec;
using grad_check::verify_grad;

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

// A contribution broadcast beyond its target's shape is summed back before it
// meets another path's: summed after, the other path's would be counted once
// per element of the broadcast axes (the gradient of sum(w * m) + sum(w) came
// out as sum(m, 0) + 3, not + 1; found by the differential tests). Expected
// values are worked out by hand.
TEST_CASE("paths of different shapes to one target are each summed to its shape") {
  const xt::xtensor<double, 1> W{0.5, -0.75};
  const xt::xtensor<double, 2> M1{{1, 2}, {3, 4}, {5, 6}};
  const xt::xtensor<double, 3> M2 = xt::ones<double>({4, 1, 2});
  auto w = fusor::shared(W, "w");
  auto m1 = fusor::shared(M1, "m1");
  auto m2 = fusor::shared(M2, "m2");
  using v1 = xt::xtensor<double, 1>;
  // larger (3, 2) meets exact (2,): d/dw = sum(m1, 0) + 1
  CHECK(v1(fusor::eval(fusor::grad(fusor::sum(w * m1) + fusor::sum(w), w))) == v1{10, 13});
  // two larger ones of different shapes, (3, 2) and (4, 1, 2): sum(m1, 0) + sum(m2, (0, 1))
  CHECK(v1(fusor::eval(fusor::grad(fusor::sum(w * m1) + fusor::sum(w * m2), w))) == v1{13, 16});
  // two larger ones whose shapes do not broadcast together, (3, 2) and (5, 2): once a plan error
  const xt::xtensor<double, 2> M3 = xt::ones<double>({5, 2});
  auto m3 = fusor::shared(M3, "m3");
  CHECK(v1(fusor::eval(fusor::grad(fusor::sum(w * m1) + fusor::sum(w * m3), w))) == v1{14, 17});
  // sum(dot(w * m1, w)) = sum_ij m1_ij w_j^2: a larger path through the matrix, an exact one through dot
  CHECK(v1(fusor::eval(fusor::grad(fusor::sum(fusor::dot(w * m1, w)), w))) == v1{9, -18});
  // A bias read by a broadcast add and by weight decay (the two-layer perceptron's pattern):
  // d/db [sum(tanh(x + b)) + 0.5 * sum(b * b)] = sum(1 - tanh(x + b)^2, 0) + b
  const xt::xtensor<double, 2> X{{0.1, -0.2}, {0.3, 0.4}, {-0.5, 0.6}};
  auto x = fusor::shared(X, "x");
  auto b = fusor::shared(W, "b");
  const v1 gb = fusor::eval(fusor::grad(fusor::sum(fusor::tanh(x + b)) + 0.5 * fusor::sum(b * b), b));
  const xt::xtensor<double, 2> t = xt::tanh(X + W);
  const v1 want = xt::sum(1.0 - t * t, {0}) + W;
  CHECK(xt::allclose(gb, want));
  verify_grad(fusor::sum(fusor::tanh(x + b)) + 0.5 * fusor::sum(b * b), b);
}

// The same rule in a second derivative: grad(cost, w1) reads w1 in several
// places (the gradient's sum_to reads the dot's shape), so its paths are
// gated; a gate summed to the target's shape may still be a closed one, a
// rank-0 zero, and a dot below a cut point must not take it as a matrix
// (it did, for one commit: "shapes (3, 3) and (1, 1) not aligned").
TEST_CASE("a Hessian-vector product through a dot of a gated gradient") {
  auto w0 = fusor::shared(mat(3, 3, -1, 1, 21), "w0");
  auto w1 = fusor::shared(mat(3, 3, -1, 1, 22), "w1");
  auto d = fusor::shared(mat(3, 3, -1, 1, 23), "d");
  const auto cost = fusor::sum(fusor::dot(fusor::maximum(fusor::expm1(fusor::tanh(w0)), w0), w1));
  const auto g = fusor::grad(cost, w1);
  grad_check::verify_hessian_vector(g * w1, w1, d);
  grad_check::verify_hessian_vector(fusor::grad(cost, w0), w0, d);
}

// A second derivative's cost is a gradient, with gates. Below a closed one
// (the part of the first gradient that was w1's) nothing is read, and the
// adjoint of a cut point's occurrence there is a closed gate, a zero of shape
// (1, 1): the walk below a cut point goes on from its first occurrence
// outside the closed gates. From the first in the tree it handed that zero to
// a dot: "shapes (2, 2) and (1, 1) not aligned" (found by the differential
// tests). A cost linear in w0 then reads w0 only through shapes, and its
// second derivative is refused, as where no gate is involved.
TEST_CASE("a second derivative through a cut point that occurs first below a closed gate") {
  auto w0 = fusor::shared(mat(2, 2, -1, 1, 24), "w0");
  auto w1 = fusor::shared(mat(1, 2, -1, 1, 25), "w1");
  auto d = fusor::shared(mat(2, 2, -1, 1, 26), "d");
  const auto a = fusor::concatenate(std::tuple(w1, w1), 0);
  const auto g = fusor::grad(fusor::mean(fusor::dot(a, w0) * fusor::dot(a, w0)), w0);
  grad_check::verify_hessian_vector(g, w0, d);
  // a = [w1; w1], so H d = (2 / 4) a^T a d = w1^T (w1 d)
  const xt::xtensor<double, 2> hv = fusor::eval(fusor::grad(fusor::sum(g * d), w0));
  const xt::xtensor<double, 2> u = w1.get_value(), v = d.get_value();
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j)
      CHECK(hv(i, j) == doctest::Approx(u(0, i) * (u(0, 0) * v(0, j) + u(0, 1) * v(1, j))).epsilon(1e-12));
  const auto linear = fusor::grad(fusor::mean(fusor::dot(a, w0)), w0);
  CHECK_THROWS_WITH_AS((void)fusor::grad(fusor::sum(linear * d), w0),
                       doctest::Contains("w0 does not appear in the cost"), fusor::value_error);
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
