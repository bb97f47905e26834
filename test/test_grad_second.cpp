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
