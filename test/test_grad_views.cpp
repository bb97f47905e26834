// fusor::grad through the selections that read part of one operand: views
// (ranges, steps, reversed, integer indices, new axes), flip, diagonal and
// take (repeated and negative indices add up) — against central finite
// differences in double, with exact values where they are easy to state —
// and an embedding trained by grad (the plan's scatter step).
// test_grad_joins.cpp has the joins and the second derivatives.
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

using fusor::_;
using fusor::range;

TEST_CASE("grad through views: ranges, steps, reversed, integer indices, new axes, flip") {
  auto A = fusor::shared(mat(5, 6, -1, 1, 1), "A");
  auto x = fusor::shared(vec(7, -1, 1, 2), "x");
  auto C = fusor::shared(mat(3, 3, -1, 1, 3), "C");
  verify_grad(fusor::sum(fusor::view(A, range(1, 4), range(_, _, 2)) * C), A);
  verify_grad(fusor::sum(fusor::exp(fusor::view(A, range(_, _, -2), range(-3, _)))), A);
  verify_grad(fusor::sum(fusor::view(A, 2) * fusor::view(A, -1)), A);  // two rows of A, each an adjoint
  verify_grad(fusor::sum(fusor::view(A, fusor::all, 3) * fusor::view(x, range(1, 6))), A);
  verify_grad(fusor::sum(fusor::view(x, range(1, _)) * fusor::view(x, range(_, -1))), x);  // overlapping
  verify_grad(fusor::sum(fusor::view(x, fusor::all, fusor::newaxis) * fusor::view(x, range(_, 3))), x);
  verify_grad(fusor::sum(fusor::flip(A, 1) * A), A);
  verify_grad(fusor::sum(fusor::view(A * A + 1.0, range(2, _), 1)), A);  // a view of a compound expression
  // Exact: the adjoint lands where the view read, zeros elsewhere.
  auto v = fusor::shared(xt::xtensor<double, 1>{1, 2, 3, 4, 5}, "v");
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(fusor::view(v, range(_, _, -2)) * 10.0), v));
  CHECK(g == xt::xtensor<double, 1>{10, 0, 10, 0, 10});
}

TEST_CASE("grad through diagonal, at offsets above and below the main one") {
  auto A = fusor::shared(mat(4, 5, -1, 1, 4), "A");
  auto d = fusor::shared(vec(4, -1, 1, 5), "d");
  verify_grad(fusor::sum(fusor::diagonal(A) * d), A);
  verify_grad(fusor::sum(fusor::exp(fusor::diagonal(A, 1))), A);
  verify_grad(fusor::sum(fusor::diagonal(A, -2) * fusor::view(d, range(_, 2))), A);
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(fusor::sum(fusor::diagonal(A, 1)), A));
  xt::xtensor<double, 2> want = xt::zeros<double>({4, 5});
  for (std::size_t i = 0; i < 4; ++i) want(i, i + 1) = 1;
  CHECK(g == want);
}

TEST_CASE("grad through take: the adjoint's rows added where the indices point, repeats included") {
  auto W = fusor::shared(mat(5, 3, -1, 1, 6), "W");  // an embedding table
  auto idx = fusor::shared(xt::xtensor<std::int64_t, 1>{1, 4, 1, -1, 0}, "idx");
  auto C = fusor::shared(mat(5, 3, -1, 1, 7), "C");
  verify_grad(fusor::sum(fusor::take(W, idx) * C), W);
  verify_grad(fusor::sum(fusor::tanh(fusor::take(W, idx, 0))), W);
  auto cols = fusor::shared(xt::xtensor<std::int64_t, 1>{2, 0, 2}, "cols");
  auto D = fusor::shared(mat(5, 3, -1, 1, 8), "D");
  verify_grad(fusor::sum(fusor::take(W, cols, 1) * D), W);
  auto grid = fusor::shared(xt::xtensor<std::int64_t, 2>{{0, 3}, {3, 3}}, "grid");
  verify_grad(fusor::sum(fusor::exp(fusor::take(W, grid, 0))), W);  // indices of rank 2
  // Exact: row 1 is taken twice, row 4 twice (4 and -1), row 0 once, rows 2 and 3 never.
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(fusor::sum(fusor::take(W, idx)), W));
  CHECK(g == xt::xtensor<double, 2>{{1, 1, 1}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {2, 2, 2}});
}

TEST_CASE("an embedding trained by grad: the plan scatters; a bad index fails before any write") {
  auto E = fusor::shared(mat(6, 2, -1, 1, 22), "E");
  fusor::vector<std::int64_t> batch{"batch"};
  fusor::matrix<double> target{"target"};
  const auto rows = fusor::take(E, batch);
  const auto cost = fusor::sum((rows - target) * (rows - target)) / 2;
  auto step = fusor::function(fusor::inputs(batch, target), fusor::outputs(cost),
                              fusor::updates(fusor::update(E, E - 0.5 * fusor::grad(cost, E))));
  const xt::xtensor<std::int64_t, 1> b{3, 1, 3};
  const xt::xtensor<double, 2> t{{1, 1}, {-1, 0}, {1, 1}};
  const xt::xtensor<double, 2> e0 = E.get_value();
  (void)step(b, t);
  CHECK(step.plan().find("scatter") != std::string::npos);
  // row 3 taken twice: E3 <- E3 - 0.5 * 2 * (E3 - t) = t exactly; row 1 halfway; the others untouched
  const xt::xtensor<double, 2> e1 = E.get_value();
  CHECK(xt::allclose(xt::view(e1, 3), xt::xtensor<double, 1>{1, 1}));
  CHECK(xt::allclose(xt::view(e1, 1), (xt::view(e0, 1) + xt::xtensor<double, 1>{-1, 0}) / 2));
  for (std::size_t r : {0, 2, 4, 5}) CHECK(xt::view(e1, r) == xt::view(e0, r));
  // an index out of range fails before anything is written
  const xt::xtensor<std::int64_t, 1> bad{0, 6, 1};
  CHECK_THROWS_AS(step(bad, t), fusor::index_error);
  CHECK(E.get_value() == e1);
}
