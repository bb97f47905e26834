// fusor::grad of the reductions against central finite differences in
// double: over all axes, one axis, several, with keepdims; the NaN-ignoring
// ones (a NaN gets no gradient); prod with zeros (the product of the others,
// never a division by zero). test_grad.cpp has the elementwise nodes.
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
using grad_check::verify_grad;

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

TEST_CASE("second derivatives through max and min reach the adjoint's own dependence on w") {
  // Found by the differential tests: the gradient's sum_to of a contribution
  // larger than its node passed it on unsummed, so the Hessian of
  // sum(w * min(w)) lost its cross terms (through the adjoint of min, sum(w)).
  auto w = fusor::shared(xt::xtensor<double, 1>{0.76405855, 0.69539276, 0.9}, "w");
  auto d = fusor::shared(xt::xtensor<double, 1>{0.19685493, -0.65170852, 0.3}, "d");
  // By hand: with m = w1 the minimum, cost = m * (w0 + w1 + w2), whose
  // Hessian is [[0, 1, 0], [1, 2, 1], [0, 1, 0]].
  const auto gw = fusor::grad(fusor::sum(w * fusor::min(w, 0)), w);
  const xt::xtensor<double, 1> hd = fusor::eval(fusor::grad(fusor::sum(gw * d), w));
  CHECK(hd(0) == doctest::Approx(-0.65170852));
  CHECK(hd(1) == doctest::Approx(0.19685493 - 2 * 0.65170852 + 0.3));
  CHECK(hd(2) == doctest::Approx(-0.65170852));
  grad_check::verify_hessian_vector(gw, w, d);
  // (A deeper cost, mean(exp(0.5 * tanh(w * max(w)))), was checked the same way
  // while fixing this; its Hessian's type names alone made clang's UBSan write
  // 4.5 GB of type descriptors into this unit, so it is not kept here.)
}
