// Second derivatives of a cost that reads an operation twice, once through a
// reduction. The gradient holds the operation's adjoint as a cut point (summed
// once, read where each occurrence needs it), and the second walk, over the
// gradient's own tree, chooses its cut points again. That tree, written out
// node by node, is thousands of nodes long (2 249 here), and the choice is a
// constant expression: it has to stay linear in the tree's length. (It was
// quadratic once, and clang, which stops a constant expression at a million
// steps, refused this unit; g++ compiled it.)
//
// A unit of its own, as test_grad_second_sums.cpp: each second derivative
// takes about a minute to compile, and 1-3 GB (clang with ASan, g++ at -Og).
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

TEST_CASE("second derivatives: a cost that reads an operation twice, once through a reduction") {
  auto w = fusor::shared(grad_check::mat(2, 3, -1, 1, 31), "w");
  auto d = fusor::shared(grad_check::mat(2, 3, -1, 1, 32), "d");
  const auto e = fusor::log(1.5 + w * w);
  const auto m = fusor::mean(e, {0, 1});
  const auto cost = fusor::sum(fusor::tanh(m * m) * e);
  const auto g = fusor::grad(cost, w);
  grad_check::verify_hessian_vector(g, w, d);
  // The product is not a vanishing one, which the differences would match
  // whatever the second walk computed.
  const xt::xtensor<double, 2> hv = fusor::eval(fusor::grad(fusor::sum(g * d), w));
  INFO("H d = ", hv);
  CHECK(xt::amax(xt::abs(hv))() > 0.01);
}

// A kernel fuses a reference's target where the reference is read, and a
// gradient's references nest: here the adjoints of s and of m, each read in
// several places, fused, made one kernel of 4.1 million leaves (a tree of 56
// million nodes written out), which no compiler finished (clang -O0: killed
// at 24 GB; found by the differential tests, seed 300106). A reference whose
// target, fused, would be large is read from memory now (expr/fusion.hpp).
TEST_CASE("second derivatives: nested references are not all fused into one kernel") {
  auto w = fusor::shared(grad_check::vec(3, -1, 1, 33), "w");
  auto d = fusor::shared(grad_check::vec(3, -1, 1, 34), "d");
  const auto m = fusor::mean(w);
  const auto s = fusor::sigmoid(m);
  const auto g = fusor::grad(fusor::sum(s * s * m), w);
  grad_check::verify_hessian_vector(g, w, d);
  // f(m) = sigmoid(m)^2 m, and m = mean(w): H d = f''(m) sum(d) / n^2 in every element.
  const double mv = grad_check::value_of(m), sv = 1 / (1 + std::exp(-mv));
  const double s1 = sv * (1 - sv), s2 = s1 * (1 - 2 * sv);
  const double f2 = 2 * mv * (s1 * s1 + sv * s2) + 4 * sv * s1;
  const xt::xtensor<double, 1> dv = d.get_value();
  const double want = f2 * (dv(0) + dv(1) + dv(2)) / 9;
  const xt::xtensor<double, 1> hv = fusor::eval(fusor::grad(fusor::sum(g * d), w));
  for (std::size_t i = 0; i < 3; ++i) CHECK(hv(i) == doctest::Approx(want).epsilon(1e-12));
}
