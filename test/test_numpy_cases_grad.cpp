// Gradient cases ported from PyTensor's own test suite (test_gradient.py,
// test_math.py's TestProd, rewriting/test_special.py): second derivatives
// through pow and prod at zeros, pow's gradients at zero, and the gradients of
// softmax and log_softmax of rows with masked (-inf) entries, against NumPy's
// values (reference/numpy_cases.hpp) or central differences.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <limits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "reference/numpy_cases.hpp"
#include "verify_grad.hpp"

TEST_CASE("the Hessian of sum(x ** 2) is 2 I, also where x is 0 (0 ** 0 is 1)") {
  // PyTensor's test_hessian: every column of the Hessian is 2 e_k. Enough
  // elements that the vector loop computes pow(x, 0), zeros among them.
  xt::xtensor<double, 1> x0 = grad_check::vec(24, -2.0, 2.0, 5);
  for (std::size_t i = 0; i < x0.size(); i += 3) x0(i) = 0.0;
  auto x = fusor::shared(x0, "x");
  auto e = fusor::shared(xt::xtensor<double, 1>(xt::zeros<double>({24})), "e");
  const auto gx = fusor::grad(fusor::sum(fusor::pow(x, 2.0)), x);
  const auto column = fusor::grad(fusor::sum(gx * e), x);
  for (std::size_t k = 0; k < 24; k += 5) {
    xt::xtensor<double, 1> ek = xt::zeros<double>({24});
    ek(k) = 1.0;
    e.set_value(ek);
    const xt::xtensor<double, 1> h = fusor::eval(column);
    CAPTURE(k);
    CHECK(h == 2.0 * ek);
  }
}

TEST_CASE("pow's gradients at zero: PyTensor's rules") {
  // d/dx x^y = y x^(y-1); d/dy x^y = x^y log x, and 0 where x is 0.
  auto x = fusor::shared(xt::xtensor<double, 1>{0.0, 0.0, 0.0, 2.0}, "x");
  auto y = fusor::shared(xt::xtensor<double, 1>{2.0, 0.0, -1.0, 0.0}, "y");
  const auto cost = fusor::sum(fusor::pow(x, y));
  const xt::xtensor<double, 1> gx = fusor::eval(fusor::grad(cost, x));
  const xt::xtensor<double, 1> gy = fusor::eval(fusor::grad(cost, y));
  CHECK(gx(0) == 0.0);         // 2 * 0^1
  CHECK(std::isnan(gx(1)));    // 0 * 0^-1 = 0 * inf, as PyTensor
  CHECK(gx(2) == -INFINITY);   // -1 * 0^-2
  CHECK(gx(3) == 0.0);         // 0 * 2^-1
  CHECK(gy(0) == 0.0);
  CHECK(gy(1) == 0.0);         // x = 0: 0, not 1 * log 0
  CHECK(gy(2) == 0.0);
  CHECK(gy(3) == doctest::Approx(std::log(2.0)));
}

TEST_CASE("softmax and log_softmax of rows with masked (-inf) entries, and their gradients, as SciPy's") {
  const xt::xtensor<double, 2> xv = xt::adapt(numpy_cases::masked_x, std::array<std::size_t, 2>{3, 4});
  const xt::xtensor<double, 2> wv = xt::adapt(numpy_cases::masked_weight, std::array<std::size_t, 2>{3, 4});
  auto x = fusor::shared(xv, "x");
  auto w = fusor::shared(wv, "w");
  const xt::xtensor<double, 2> sm = fusor::eval(fusor::softmax(x, 1));
  const xt::xtensor<double, 2> lsm = fusor::eval(fusor::log_softmax(x, -1));
  for (std::size_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(sm.flat(i) == doctest::Approx(numpy_cases::masked_softmax[i]).epsilon(1e-14));
    if (std::isinf(numpy_cases::masked_log_softmax[i])) CHECK(lsm.flat(i) == numpy_cases::masked_log_softmax[i]);
    else CHECK(lsm.flat(i) == doctest::Approx(numpy_cases::masked_log_softmax[i]).epsilon(1e-14));
  }
  // A cost that reads the unmasked log-probabilities only.
  const auto masked = fusor::abs(x) == std::numeric_limits<double>::infinity();
  const auto cost = fusor::sum(fusor::where(masked, 0.0, w * fusor::log_softmax(x, 1)));
  const xt::xtensor<double, 2> g = fusor::eval(fusor::grad(cost, x));
  const xt::xtensor<double, 2> gs = fusor::eval(fusor::grad(fusor::sum(w * fusor::softmax(x, 1)), x));
  for (std::size_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(g.flat(i) == doctest::Approx(numpy_cases::masked_log_softmax_grad[i]).epsilon(1e-13));
    CHECK(gs.flat(i) == doctest::Approx(numpy_cases::masked_softmax_grad[i]).epsilon(1e-13));
  }
}

TEST_CASE("second derivatives of prod along an axis with one and two zeros in a row, against differences") {
  // PyTensor's TestProd::test_verify_grad_with_zeros: rows with no zero, one
  // and two zeros; the Hessian of each cost, column by column (a
  // Hessian-vector product with each unit vector), against central
  // differences of the gradient.
  const xt::xtensor<double, 2> x0{{1.0, 2.0, 3.0}, {0.0, 5.0, 6.0}, {0.0, 0.0, 9.0}};
  auto x = fusor::shared(x0, "x");
  auto v = fusor::shared(xt::xtensor<double, 2>(xt::zeros<double>({3, 3})), "v");
  const auto p = fusor::prod(x, 1);
  const auto g_plain = fusor::grad(fusor::sum(p), x);
  const auto g_columns = fusor::grad(fusor::sum(fusor::prod(x, 0) * fusor::arange(1.0, 4.0)), x);
  for (std::size_t k = 0; k < 9; ++k) {
    xt::xtensor<double, 2> ek = xt::zeros<double>({3, 3});
    ek.flat(k) = 1.0;
    v.set_value(ek);
    CAPTURE(k);
    grad_check::verify_hessian_vector(g_plain, x, v);
    grad_check::verify_hessian_vector(g_columns, x, v);
  }
  // the first derivatives too (the product of the other elements), through
  // a square as PyTensor's test does
  grad_check::verify_grad(fusor::sum(p * p), x);
  // one exact column: d/dx10 of d sum(prod(x, 1)) / dx11 = x12 = 6
  v.set_value(xt::xtensor<double, 2>{{0, 0, 0}, {1, 0, 0}, {0, 0, 0}});
  const xt::xtensor<double, 2> h = fusor::eval(fusor::grad(fusor::sum(g_plain * v), x));
  CHECK(h(1, 1) == 6.0);
  CHECK(h(1, 2) == 5.0);
  CHECK(h(2, 0) == 0.0);
  // and with three zeros in a row every second derivative is 0
  x.set_value(xt::xtensor<double, 2>{{0.0, 0.0, 0.0}, {1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  v.set_value(xt::xtensor<double, 2>{{1, 1, 1}, {0, 0, 0}, {0, 0, 0}});
  const xt::xtensor<double, 2> h3 = fusor::eval(fusor::grad(fusor::sum(g_plain * v), x));
  CHECK(h3(0, 0) == 0.0);
  CHECK(h3(0, 1) == 0.0);
  CHECK(h3(0, 2) == 0.0);
}

