// Second derivatives whose cut points are read in hundreds of places (both
// found by the differential tests). The first's adjoints sum some 250
// contributions (seed 103). Summed in a chain, they took
// the graph builder past g++'s template depth of 900 and, unoptimised, the
// summing recursion past a thread's 8 MB of stack (each level a frame holding
// every contribution still to come); and one braced list held every
// occurrence's adjoint at once. Sums of more than four contributions are the
// sum of their halves now, and each occurrence's adjoint is computed in a call
// of its own (grad/reverse.hpp). The second reads one cut point in 431
// places (seed 200021): the case says what that broke.
//
// A unit of its own, as test_grad_second.cpp: each second derivative takes
// a minute or so to compile, and 1-4 GB (clang with ASan, g++ at -Og).
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <tuple>

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

TEST_CASE("second derivatives: one cut point read in hundreds of places") {
  // The stack is read three times, and the second walk meets the one cut
  // point of the gradient's tree in 431 places: std::array's deduction guide,
  // which once deduced the adjoints' array, folds over every element, and
  // clang stops a fold at 256 operands (found by the differential tests, seed
  // 200021). sum(stack(w, w)^3) = 2 sum(w^3): the gradient is 6 w^2, and the
  // product with d is 12 w d exactly.
  auto w = fusor::shared(grad_check::vec(3, -1, 1, 43), "w");
  auto d = fusor::shared(grad_check::vec(3, -1, 1, 44), "d");
  const auto e = fusor::stack(std::tuple(w, w), 0);
  const auto g = fusor::grad(fusor::sum(e * e * e), w);
  grad_check::verify_hessian_vector(g, w, d);
  const xt::xtensor<double, 1> hv = fusor::eval(fusor::grad(fusor::sum(g * d), w));
  const xt::xtensor<double, 1> expected = 12.0 * w.get_value() * d.get_value();
  INFO("H d = ", hv, ", 12 w d = ", expected);
  CHECK(xt::allclose(hv, expected, 1e-12, 1e-12));
}
