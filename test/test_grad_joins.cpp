// fusor::grad through the joins: concatenate, stack, roll and a constant pad
// (each part gets its piece), the refusal of an edge pad, and second
// derivatives through views, diagonal, take and concatenate.
// test_grad_views.cpp has the selections of one operand.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::mat;
using grad_check::vec;
using grad_check::verify_grad;
using grad_check::verify_hessian_vector;

using fusor::_;
using fusor::range;

TEST_CASE("grad through concatenate and stack: each part gets its piece") {
  auto A = fusor::shared(mat(3, 2, -1, 1, 9), "A");
  auto B = fusor::shared(mat(3, 4, -1, 1, 10), "B");
  auto C = fusor::shared(mat(3, 6, -1, 1, 11), "C");
  const auto joined = fusor::concatenate(std::tuple(A, B * 2.0), 1);
  verify_grad(fusor::sum(joined * C), A);
  verify_grad(fusor::sum(fusor::sin(joined) * C), B);
  // one variable twice: both pieces add up
  auto x = fusor::shared(vec(3, -1, 1, 12), "x");
  auto w = fusor::shared(vec(6, -1, 1, 13), "w");
  verify_grad(fusor::sum(fusor::concatenate({x, x}, 0) * w), x);
  const xt::xtensor<double, 1> wv = w.get_value();
  const xt::xtensor<double, 1> gx = fusor::eval(fusor::grad(fusor::sum(fusor::concatenate({x, x}, 0) * w), x));
  CHECK(xt::allclose(gx, xt::view(wv, xt::range(0, 3)) + xt::view(wv, xt::range(3, 6)), 0, 1e-15));
  // stack: concatenate of parts with a new axis
  auto y = fusor::shared(vec(3, -1, 1, 14), "y");
  auto S = fusor::shared(mat(2, 3, -1, 1, 15), "S");
  verify_grad(fusor::sum(fusor::stack(std::tuple(x, y * y), 0) * S), y);
  verify_grad(fusor::sum(fusor::exp(fusor::stack(std::tuple(x, y), 1))), x);
}

TEST_CASE("grad through roll and a constant pad; an edge pad is refused, naming it") {
  auto x = fusor::shared(vec(5, -1, 1, 16), "x");
  auto c = fusor::shared(vec(5, -1, 1, 17), "c");
  verify_grad(fusor::sum(fusor::roll(x, 2, 0) * c), x);
  verify_grad(fusor::sum(fusor::roll(x, -7, 0) * c), x);
  auto A = fusor::shared(mat(3, 4, -1, 1, 18), "A");
  auto P = fusor::shared(mat(4, 7, -1, 1, 19), "P");
  verify_grad(fusor::sum(fusor::pad(A, {{1, 0}, {2, 1}}, 3.0) * P), A);
  verify_grad(fusor::sum(fusor::exp(fusor::pad(A, 1, 0.0))), A);
  // roll exactly: element i of x went to (i + 2) mod 5
  const xt::xtensor<double, 1> cv = c.get_value();
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(fusor::roll(x, 2, 0) * c), x));
  for (std::size_t i = 0; i < 5; ++i) CHECK(g(i) == cv((i + 2) % 5));
  // edge: several result elements from one operand element
  try {
    (void)fusor::grad(fusor::sum(fusor::pad(x, 1, fusor::edge)) + fusor::sum(x * x), x);
    FAIL("an edge pad is not differentiated");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("edge pad") != std::string::npos);
    CHECK(std::string(e.what()).find("x") != std::string::npos);
  }
  // ...another variable of x's type read through one is fine
  const xt::xtensor<double, 1> g2 = fusor::eval(fusor::grad(fusor::sum(fusor::pad(c, 1, fusor::edge)) * fusor::sum(x), x));
  const double s = xt::sum(cv)() + cv(0) + cv(4);
  CHECK(xt::allclose(g2, xt::xtensor<double, 1>(xt::ones<double>({5}) * s)));
}

TEST_CASE("second derivatives through selections: a Hessian-vector product against differences") {
  auto W = fusor::shared(mat(4, 3, -1, 1, 20), "W");
  auto V = fusor::shared(mat(4, 3, -1, 1, 21), "V");
  auto idx = fusor::shared(xt::xtensor<std::int64_t, 1>{2, 0, 2}, "idx");
  const auto rows = fusor::take(W, idx);
  const auto cost = fusor::sum(fusor::exp(fusor::view(W, range(1, _)) * 0.5)) +
                    fusor::sum(rows * rows * rows) +
                    fusor::sum(fusor::sin(fusor::concatenate(std::tuple(W, fusor::diagonal(W) * 1.0 + W), 0)));
  const auto gW = fusor::grad(cost, W);
  verify_hessian_vector(gW, W, V);
}
