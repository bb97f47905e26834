// Cases ported from PyTensor's own test suite (test_math.py,
// rewriting/test_special.py, test_basic.py), with the expected values NumPy
// and SciPy give: pow's special values on every loop (scalar tail, the
// machine's vectors, and in the baseline-ISA and sanitizer builds SSE2),
// arange's fill rule, logsumexp at infinities, stack of a braced list, and
// array constants. test_numpy_cases_grad.cpp has the gradients.
//
// The expected values are in reference/numpy_cases.hpp, written by
// reference/numpy_cases.py from NumPy and SciPy (never from fusor), with
// NumPy on its baseline path: element by element C's pow (NumPy's AVX-512
// dispatch of float32 power differs from powf in the last bit for some
// ordinary values; fusor gives C's answer on every instruction set).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

#include "reference/numpy_cases.hpp"
#include "verify_grad.hpp"

namespace {

/// Equal as NumPy compares in assert_array_equal: NaN equals NaN, and the
/// sign of a zero is checked when `signs` is given.
template <class T>
bool same(T got, T want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

/// Each case repeated `copies` times in a row: whatever the vector width (up
/// to 16 lanes) and the loop's alignment, every case fills at least one whole
/// batch, so the vector loop computes each case, not only the scalar tail.
template <class T>
xt::xtensor<T, 1> repeated(const std::vector<double>& values, std::size_t copies) {
  xt::xtensor<T, 1> out = xt::zeros<T>({values.size() * copies});
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t k = 0; k < copies; ++k) out(i * copies + k) = static_cast<T>(values[i]);
  return out;
}

template <class T, class Want>
void check_pow_table(const Want& want) {
  constexpr std::size_t copies = 32;
  const auto base = repeated<T>(numpy_cases::pow_base, copies);
  const auto exponent = repeated<T>(numpy_cases::pow_exponent, copies);
  fusor::vector<T> x{"x"}, y{"y"};
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(fusor::pow(x, y)));
  const xt::xtensor<T, 1> got = f(base, exponent);
  REQUIRE(got.size() == want.size() * copies);
  int wrong = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    for (std::size_t k = 0; k < copies; ++k) {
      const T g = got(i * copies + k);
      if (!same<T>(g, static_cast<T>(want[i]))) {
        if (++wrong <= 10)
          FAIL_CHECK("pow(", numpy_cases::pow_base[i], ", ", numpy_cases::pow_exponent[i], ") is ", g, ", NumPy: ",
                     want[i], " (copy ", k, ")");
      }
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("pow's special values equal np.power's, in the vector loop and the scalar tail") {
  SUBCASE("float64") { check_pow_table<double>(numpy_cases::pow_f64); }
  SUBCASE("float32") { check_pow_table<float>(numpy_cases::pow_f32); }
  SUBCASE("the sign of a zero or infinite result (pow(-0, 3) is -0, pow(-0, -1) -inf)") {
    const auto base = repeated<double>(numpy_cases::pow_base, 16);
    const auto exponent = repeated<double>(numpy_cases::pow_exponent, 16);
    fusor::vector<double> x{"x"}, y{"y"};
    const xt::xtensor<double, 1> got = fusor::eval(fusor::pow(x, y), x = base, y = exponent);
    for (std::size_t i = 0; i < numpy_cases::pow_f64_signbit.size(); ++i) {
      if (std::isnan(numpy_cases::pow_f64[i])) continue;
      CAPTURE(i);
      CHECK(std::signbit(got(i * 16)) == numpy_cases::pow_f64_signbit[i]);
    }
  }
  SUBCASE("a scalar exponent (broadcast) and a constant: pow(x, 0) is 1 for x = 0, NaN and inf") {
    const xt::xtensor<double, 1> xv{0.0, -0.0, std::nan(""), INFINITY, -INFINITY, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    fusor::vector<double> x{"x"};
    const xt::xtensor<double, 1> ones = fusor::eval(fusor::pow(x, 0.0), x = xv);
    for (double v : ones) CHECK(v == 1.0);
  }
}

TEST_CASE("pow: ordinary values are C's pow's, bit for bit, in the vector loop") {
  // NumPy's np.power is C's pow (powf for float32) element by element.
  xt::xtensor<double, 1> xv = grad_check::vec(4096, 0.01, 30.0, 3);
  xt::xtensor<double, 1> yv = grad_check::vec(4096, -7.0, 7.0, 4);
  for (std::size_t i = 0; i < xv.size(); i += 3) xv(i) = -xv(i);  // negative bases, integral exponents
  for (std::size_t i = 0; i < yv.size(); i += 3) yv(i) = std::round(yv(i));
  fusor::vector<double> x{"x"}, y{"y"};
  const xt::xtensor<double, 1> got = fusor::eval(fusor::pow(x, y), x = xv, y = yv);
  const xt::xtensor<float, 1> got32 =
      fusor::eval(fusor::pow(fusor::cast<float>(x), fusor::cast<float>(y)), x = xv, y = yv);
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double want = std::pow(xv(i), yv(i));
    const float want32 = std::pow(static_cast<float>(xv(i)), static_cast<float>(yv(i)));
    CAPTURE(xv(i));
    CAPTURE(yv(i));
    CHECK(same<double>(got(i), want));
    CHECK(same<float>(got32(i), want32));
  }
}

TEST_CASE("arange fills as NumPy does: start + i * ((start + step) - start)") {
  const xt::xtensor<double, 1> r = fusor::eval(fusor::arange(-5.0, 1.1, 1.2));
  REQUIRE(r.size() == numpy_cases::arange_f64.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    CAPTURE(i);
    CHECK(r(i) == numpy_cases::arange_f64[i]);
  }
  const xt::xtensor<float, 1> r32 = fusor::eval(fusor::arange(-5.0f, 1.1f, 1.2f));
  REQUIRE(r32.size() == numpy_cases::arange_f32.size());
  for (std::size_t i = 0; i < r32.size(); ++i) {
    CAPTURE(i);
    CHECK(r32(i) == numpy_cases::arange_f32[i]);
  }
  const xt::xtensor<double, 1> longer = fusor::eval(fusor::arange(0.1, 7.3, 0.3));
  REQUIRE(longer.size() == numpy_cases::arange_f64_long.size());
  for (std::size_t i = 0; i < longer.size(); ++i) {
    CAPTURE(i);
    CHECK(longer(i) == numpy_cases::arange_f64_long[i]);
  }
  // integers wrap as NumPy's do
  CHECK(fusor::eval(fusor::arange<std::int8_t>(120, 127, 3)) == xt::xtensor<std::int8_t, 1>{120, 123, 126});
}

TEST_CASE("logsumexp at infinities equals scipy.special.logsumexp") {
  using numpy_cases::inf_v;
  fusor::vector<double> v{"v"};
  fusor::matrix<double> m{"m"};
  auto lse = fusor::function(fusor::inputs(v), fusor::outputs(fusor::logsumexp(v)));
  // the rewritten naive form takes the same path
  auto rewritten = fusor::function(fusor::inputs(v), fusor::outputs(fusor::log(fusor::sum(fusor::exp(v)))));
  const std::pair<xt::xtensor<double, 1>, double> cases[] = {
      {{-inf_v, -inf_v}, numpy_cases::lse_neg_inf[0]},
      {{inf_v, 1.0}, numpy_cases::lse_pos_inf[0]},
      {{inf_v, -inf_v}, numpy_cases::lse_mixed_inf[0]},
  };
  for (const auto& c : cases) {
    const auto& input = c.first;  // (not a structured binding: CAPTURE's lambda captures it)
    const double want = c.second;
    CAPTURE(input);
    const xt::xtensor<double, 0> a = lse(input);
    const xt::xtensor<double, 0> b = rewritten(input);
    CHECK(a() == want);
    CHECK(b() == want);
  }
  const xt::xtensor<double, 1> nan_case = xt::xtensor<double, 1>{std::nan(""), 1.0};
  CHECK(std::isnan(xt::xtensor<double, 0>(lse(nan_case))()));

  const xt::xtensor<double, 2> rows{{-inf_v, -inf_v}, {0.0, 0.0}};
  const xt::xtensor<double, 1> along_rows = fusor::eval(fusor::logsumexp(m, 1), m = rows);
  const xt::xtensor<double, 1> rewritten_rows = fusor::eval(fusor::log(fusor::sum(fusor::exp(m), 1)), m = rows);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(along_rows(i) == numpy_cases::lse_rows[i]);
    CHECK(rewritten_rows(i) == numpy_cases::lse_rows[i]);
  }
  const xt::xtensor<double, 2> cols{{-inf_v, 0.0, inf_v}, {-inf_v, 0.0, 1.0}};
  const xt::xtensor<double, 2> kept = fusor::eval(fusor::logsumexp(m, 0, fusor::keepdims), m = cols);
  REQUIRE(kept.shape()[0] == 1);
  CHECK(kept(0, 0) == numpy_cases::lse_cols[0]);  // -inf
  CHECK(kept(0, 1) == doctest::Approx(numpy_cases::lse_cols[1]).epsilon(1e-15));
  CHECK(kept(0, 2) == numpy_cases::lse_cols[2]);  // inf
}

TEST_CASE("softmax and log_softmax of rows holding +inf or only -inf equal SciPy's") {
  const xt::xtensor<double, 2> xv = xt::adapt(numpy_cases::inf_rows, std::array<std::size_t, 2>{3, 3});
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::softmax(x, 1), fusor::log_softmax(x, 1)));
  auto [sm, lsm] = f(xv);
  for (std::size_t i = 0; i < 9; ++i) {
    CAPTURE(i);
    const double want_sm = numpy_cases::inf_rows_softmax[i], want_lsm = numpy_cases::inf_rows_log_softmax[i];
    if (std::isfinite(want_sm)) CHECK(sm.flat(i) == doctest::Approx(want_sm).epsilon(1e-15));
    else CHECK(same<double>(sm.flat(i), want_sm));
    if (std::isfinite(want_lsm)) CHECK(lsm.flat(i) == doctest::Approx(want_lsm).epsilon(1e-15));
    else CHECK(same<double>(lsm.flat(i), want_lsm));
  }
}

TEST_CASE("stack takes a braced list of parts of one type, as concatenate does") {
  const xt::xtensor<double, 2> a{{1, 2, 3}, {4, 5, 6}};
  auto A = fusor::shared(a, "A");
  auto B = fusor::shared(xt::xtensor<double, 2>(a * 10.0), "B");
  const xt::xtensor<double, 3> s0 = fusor::eval(fusor::stack({A, B}, 0));
  const xt::xtensor<double, 3> s2 = fusor::eval(fusor::stack({A, B, A}, -1));
  // np.stack((a, 10 * a), 0) and np.stack((a, 10 * a, a), -1)
  const xt::xtensor<double, 3> want0{{{1, 2, 3}, {4, 5, 6}}, {{10, 20, 30}, {40, 50, 60}}};
  const xt::xtensor<double, 3> want2{{{1, 10, 1}, {2, 20, 2}, {3, 30, 3}}, {{4, 40, 4}, {5, 50, 5}, {6, 60, 6}}};
  CHECK(s0 == want0);
  CHECK(s2 == want2);
}

TEST_CASE("fusor::constant(array): a copy held by value, usable in functions and gradients") {
  xt::xtensor<double, 1> table{1.0, 2.0, 4.0};
  const auto c = fusor::constant(table);
  static_assert(std::is_same_v<decltype(c), const fusor::constant<xt::xtensor<double, 1>>>);
  table(0) = 100.0;  // the constant took a copy: later changes are not seen
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * c + fusor::sum(c)));
  const xt::xtensor<double, 1> r = f(xt::xtensor<double, 1>{1.0, 1.0, 1.0});
  CHECK(r == xt::xtensor<double, 1>{8.0, 9.0, 11.0});
  // its buffer is its own: not the array's
  const auto view = c.variable().get_value(fusor::borrow);
  CHECK(view.data() != table.data());
  CHECK(view(0) == 1.0);
  // gradients: a constant gets none and passes its values on
  auto w = fusor::shared(xt::xtensor<double, 1>{0.5, -1.0, 2.0}, "w");
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(w * c), w));
  CHECK(g == xt::xtensor<double, 1>{1.0, 2.0, 4.0});
  // the dtype is the array's (no weak-scalar promotion), and a scalar still
  // makes a scalar constant
  const auto ci = fusor::constant(xt::xtensor<std::int32_t, 1>{1, 2, 3});
  static_assert(std::is_same_v<fusor::value_type_t<fusor::as_expression_t<decltype(ci)>>, std::int32_t>);
  static_assert(std::is_same_v<decltype(fusor::constant(2.5)), fusor::constant<double>>);
  CHECK(fusor::eval(fusor::sum(ci * 2)) == 12);
  // the plan names it
  CHECK(f.plan().find("constant#") != std::string::npos);
}
