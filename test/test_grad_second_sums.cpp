// A second derivative whose cut points' adjoints sum some 250 contributions
// (found by the differential tests, seed 103). Summed in a chain, they took
// the graph builder past g++'s template depth of 900 and, unoptimised, the
// summing recursion past a thread's 8 MB of stack (each level a frame holding
// every contribution still to come); and one braced list held every
// occurrence's adjoint at once. Sums of more than four contributions are the
// sum of their halves now, and each occurrence's adjoint is computed in a call
// of its own (grad/reverse.hpp).
//
// A unit of its own, as test_grad_second.cpp: each second derivative takes
// about a minute and up to 2 GB to compile.
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

TEST_CASE("second derivatives: hundreds of contributions to the cut points' adjoints") {
  // Random values: none on where's threshold, where the differences would cross the kink.
  auto w = fusor::shared(xt::xtensor<double, 3>(xt::reshape_view(grad_check::vec(36, -1, 1, 41), {3, 3, 4})), "w");
  auto d = fusor::shared(xt::xtensor<double, 3>(xt::reshape_view(grad_check::vec(36, -1, 1, 42), {3, 3, 4})), "d");
  const auto e0 = fusor::flip(w, 0);
  const auto e2 = fusor::where(e0 > 0.1, w * e0, w);
  const auto cost = fusor::sum(fusor::log(1.5 + e2 * e2));
  const auto g = fusor::grad(cost, w);
  grad_check::verify_hessian_vector(g, w, d);
  // The product is not a vanishing one, which the differences would match
  // whatever the second walk computed.
  const xt::xtensor<double, 3> hv = fusor::eval(fusor::grad(fusor::sum(g * d), w));
  INFO("H d = ", hv);
  CHECK(xt::amax(xt::abs(hv))() > 0.01);
}
