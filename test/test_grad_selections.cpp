// fusor::grad through the selections: views (ranges, steps, reversed,
// integer indices, new axes), flip, diagonal, take (repeated and negative
// indices add up), concatenate, stack, roll and constant pad — against
// central finite differences in double, with exact values where they are
// easy to state; second derivatives through them; the plan's steps; and the
// refusal of an edge pad.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

namespace {

using grad_check::verify_grad;
using grad_check::verify_hessian_vector;

xt::xtensor<double, 1> vec(std::size_t n, int seed) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({n}, -1, 1);
}
xt::xtensor<double, 2> mat(std::size_t m, std::size_t n, int seed) {
  xt::random::seed(static_cast<unsigned>(seed));
  return xt::random::rand<double>({m, n}, -1, 1);
}

}  // namespace

using fusor::_;
using fusor::range;

TEST_CASE("grad through views: ranges, steps, reversed, integer indices, new axes, flip") {
  auto A = fusor::shared(mat(5, 6, 1), "A");
  auto x = fusor::shared(vec(7, 2), "x");
  auto C = fusor::shared(mat(3, 3, 3), "C");
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
  auto A = fusor::shared(mat(4, 5, 4), "A");
  auto d = fusor::shared(vec(4, 5), "d");
  verify_grad(fusor::sum(fusor::diagonal(A) * d), A);
  verify_grad(fusor::sum(fusor::exp(fusor::diagonal(A, 1))), A);
  verify_grad(fusor::sum(fusor::diagonal(A, -2) * fusor::view(d, range(_, 2))), A);
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(fusor::sum(fusor::diagonal(A, 1)), A));
  xt::xtensor<double, 2> want = xt::zeros<double>({4, 5});
  for (std::size_t i = 0; i < 4; ++i) want(i, i + 1) = 1;
  CHECK(g == want);
}

TEST_CASE("grad through take: the adjoint's rows added where the indices point, repeats included") {
  auto W = fusor::shared(mat(5, 3, 6), "W");  // an embedding table
  auto idx = fusor::shared(xt::xtensor<std::int64_t, 1>{1, 4, 1, -1, 0}, "idx");
  auto C = fusor::shared(mat(5, 3, 7), "C");
  verify_grad(fusor::sum(fusor::take(W, idx) * C), W);
  verify_grad(fusor::sum(fusor::tanh(fusor::take(W, idx, 0))), W);
  auto cols = fusor::shared(xt::xtensor<std::int64_t, 1>{2, 0, 2}, "cols");
  auto D = fusor::shared(mat(5, 3, 8), "D");
  verify_grad(fusor::sum(fusor::take(W, cols, 1) * D), W);
  auto grid = fusor::shared(xt::xtensor<std::int64_t, 2>{{0, 3}, {3, 3}}, "grid");
  verify_grad(fusor::sum(fusor::exp(fusor::take(W, grid, 0))), W);  // indices of rank 2
  // Exact: row 1 is taken twice, row 4 twice (4 and -1), row 0 once, rows 2 and 3 never.
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(fusor::sum(fusor::take(W, idx)), W));
  CHECK(g == xt::xtensor<double, 2>{{1, 1, 1}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {2, 2, 2}});
}

TEST_CASE("grad through concatenate and stack: each part gets its piece") {
  auto A = fusor::shared(mat(3, 2, 9), "A");
  auto B = fusor::shared(mat(3, 4, 10), "B");
  auto C = fusor::shared(mat(3, 6, 11), "C");
  const auto joined = fusor::concatenate(std::tuple(A, B * 2.0), 1);
  verify_grad(fusor::sum(joined * C), A);
  verify_grad(fusor::sum(fusor::sin(joined) * C), B);
  // one variable twice: both pieces add up
  auto x = fusor::shared(vec(3, 12), "x");
  auto w = fusor::shared(vec(6, 13), "w");
  verify_grad(fusor::sum(fusor::concatenate({x, x}, 0) * w), x);
  const xt::xtensor<double, 1> wv = w.get_value();
  const xt::xtensor<double, 1> gx = fusor::eval(fusor::grad(fusor::sum(fusor::concatenate({x, x}, 0) * w), x));
  CHECK(xt::allclose(gx, xt::view(wv, xt::range(0, 3)) + xt::view(wv, xt::range(3, 6)), 0, 1e-15));
  // stack: concatenate of parts with a new axis
  auto y = fusor::shared(vec(3, 14), "y");
  auto S = fusor::shared(mat(2, 3, 15), "S");
  verify_grad(fusor::sum(fusor::stack(std::tuple(x, y * y), 0) * S), y);
  verify_grad(fusor::sum(fusor::exp(fusor::stack(std::tuple(x, y), 1))), x);
}

TEST_CASE("grad through roll and a constant pad; an edge pad is refused, naming it") {
  auto x = fusor::shared(vec(5, 16), "x");
  auto c = fusor::shared(vec(5, 17), "c");
  verify_grad(fusor::sum(fusor::roll(x, 2, 0) * c), x);
  verify_grad(fusor::sum(fusor::roll(x, -7, 0) * c), x);
  auto A = fusor::shared(mat(3, 4, 18), "A");
  auto P = fusor::shared(mat(4, 7, 19), "P");
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
  auto W = fusor::shared(mat(4, 3, 20), "W");
  auto V = fusor::shared(mat(4, 3, 21), "V");
  auto idx = fusor::shared(xt::xtensor<std::int64_t, 1>{2, 0, 2}, "idx");
  const auto rows = fusor::take(W, idx);
  const auto cost = fusor::sum(fusor::exp(fusor::view(W, range(1, _)) * 0.5)) +
                    fusor::sum(rows * rows * rows) +
                    fusor::sum(fusor::sin(fusor::concatenate(std::tuple(W, fusor::diagonal(W) * 1.0 + W), 0)));
  const auto gW = fusor::grad(cost, W);
  verify_hessian_vector(gW, W, V);
}

TEST_CASE("an embedding trained by grad: the plan scatters; a bad index fails before any write") {
  auto E = fusor::shared(mat(6, 2, 22), "E");
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
