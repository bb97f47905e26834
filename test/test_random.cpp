// Random streams: Philox4x32-10 against its published known answers; the
// distributions (mean, variance, a chi-square goodness of fit); the stream's
// counter (two calls differ, a failed call draws none, the same seed repeats);
// and that element i depends on i only — the same numbers whatever the loop,
// the vector width or the layout of the kernel that reads them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

namespace {
/// Pearson's chi-square of `counts` against `expected` per bin.
double chi_square(const std::vector<double>& counts, const std::vector<double>& expected) {
  double x = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) x += (counts[i] - expected[i]) * (counts[i] - expected[i]) / expected[i];
  return x;
}
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
}  // namespace

TEST_CASE("Philox4x32-10 gives Random123's known answers") {
  auto check = [](std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
                  std::uint32_t k1, std::array<std::uint32_t, 4> want) {
    const auto r = fusor::detail::philox4x32_10(c0, c1, c2, c3, k0, k1);
    for (int i = 0; i < 4; ++i) CHECK(r.w[i] == want[static_cast<std::size_t>(i)]);
  };
  check(0, 0, 0, 0, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  check(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  check(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("uniform, normal and bernoulli have their distributions") {
  fusor::random_stream rng(2026);
  constexpr std::size_t n = 200000;
  SUBCASE("uniform on [-1, 3): mean 1, variance 4/3, flat over 20 bins") {
    const xt::xtensor<double, 1> u = fusor::eval(rng.uniform({n}, -1.0, 3.0));
    CHECK(xt::amin(u)() >= -1.0);
    CHECK(xt::amax(u)() < 3.0);
    CHECK(xt::mean(u)() == doctest::Approx(1.0).epsilon(0.01));
    CHECK(xt::variance(u)() == doctest::Approx(4.0 / 3.0).epsilon(0.01));
    std::vector<double> counts(20, 0.0), expected(20, static_cast<double>(n) / 20);
    for (double v : u) counts[static_cast<std::size_t>((v + 1.0) / 4.0 * 20)] += 1;
    CHECK(chi_square(counts, expected) < 43.82);  // 19 degrees of freedom, p = 0.001
  }
  SUBCASE("uniform float32 in [0, 1)") {
    const xt::xtensor<float, 2> u = fusor::eval(rng.uniform<float>({400, 500}));
    CHECK(xt::amin(u)() >= 0.0f);
    CHECK(xt::amax(u)() < 1.0f);
    CHECK(static_cast<double>(xt::mean(u)()) == doctest::Approx(0.5).epsilon(0.01));
  }
  SUBCASE("normal(2, 0.5): mean, variance, and the normal's mass over 16 bins") {
    const xt::xtensor<double, 1> z = fusor::eval(rng.normal({n}, 2.0, 0.5));
    CHECK(xt::mean(z)() == doctest::Approx(2.0).epsilon(0.005));
    CHECK(xt::variance(z)() == doctest::Approx(0.25).epsilon(0.02));
    std::vector<double> counts(16, 0.0), expected(16);
    for (double v : z) {
      const double s = (v - 2.0) / 0.5;  // standardised; bins of width 0.5 over [-4, 4), tails in the ends
      const int b = std::clamp(static_cast<int>(std::floor((s + 4.0) / 0.5)), 0, 15);
      counts[static_cast<std::size_t>(b)] += 1;
    }
    for (int b = 0; b < 16; ++b) {
      const double lo = b == 0 ? -INFINITY : -4.0 + 0.5 * b, hi = b == 15 ? INFINITY : -4.0 + 0.5 * (b + 1);
      expected[static_cast<std::size_t>(b)] = static_cast<double>(n) * (normal_cdf(hi) - normal_cdf(lo));
    }
    CHECK(chi_square(counts, expected) < 37.70);  // 15 degrees of freedom, p = 0.001
  }
  SUBCASE("bernoulli(0.3)") {
    const xt::xtensor<bool, 1> b = fusor::eval(rng.bernoulli(0.3, {n}));
    const double ones = static_cast<double>(std::count(b.begin(), b.end(), true));
    CHECK(ones / n == doctest::Approx(0.3).epsilon(0.01));
    CHECK_THROWS_AS((void)rng.bernoulli(1.5, {3}), fusor::value_error);
  }
}

TEST_CASE("a function advances the stream: calls differ, a failed call draws none, a seed repeats") {
  fusor::random_stream rng(7);
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x + rng.uniform({4})));
  const xt::xtensor<double, 1> zero = xt::zeros<double>({4});
  const xt::xtensor<double, 1> a = f(zero);
  CHECK(rng.state().get_value()() == 1);
  const xt::xtensor<double, 1> b = f(zero);
  CHECK(rng.state().get_value()() == 2);
  CHECK(a != b);
  // A call with a bad argument fails before anything runs: no number is drawn.
  CHECK_THROWS_AS(f(xt::xtensor<double, 1>{1.0, 2.0, 3.0}), fusor::error);
  CHECK(rng.state().get_value()() == 2);
  const xt::xtensor<double, 1> c = f(zero);
  // The same seed, the same draws, the same calls: the same numbers.
  fusor::random_stream again(7);
  auto g = fusor::function(fusor::inputs(x), fusor::outputs(x + again.uniform({4})));
  CHECK(g(zero) == a);
  CHECK(g(zero) == b);
  CHECK(g(zero) == c);
  // Another seed: other numbers.
  fusor::random_stream other(8);
  CHECK(fusor::eval(other.uniform({4})) != a);
  // Two draws of one stream are independent; one draw read twice is the same.
  auto d1 = rng.uniform({1000});
  auto d2 = rng.uniform({1000});
  const xt::xtensor<double, 1> diff = fusor::eval(d1 - d2);
  CHECK(xt::amax(xt::abs(diff))() > 0.5);
  CHECK(fusor::eval(fusor::sum(fusor::abs(d1 - d1))) == 0.0);
}

TEST_CASE("element i depends on i only: the same numbers through any kernel, as the generator gives them") {
  fusor::random_stream rng(99);
  auto draw = rng.normal({37, 41});
  // Evaluated whole (vectorised loop), through a transpose (strided loop),
  // and as a view of a 2-row block — then against the generator directly.
  fusor::random_stream same(99);
  auto draw2 = same.normal({37, 41});
  const xt::xtensor<double, 2> whole = fusor::eval(draw);
  const xt::xtensor<double, 2> turned = fusor::eval(fusor::transpose(draw2));
  CHECK(xt::transpose(turned) == whole);
  const std::uint64_t key = fusor::detail::draw_key(99, 0);
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, std::int64_t{40}, std::int64_t{41}, std::int64_t{37 * 41 - 1}})
    CHECK(whole.data()[i] == fusor::fn::normal_at{}(i, std::uint64_t{0}, key, 0.0, 1.0));
  // A draw fused into a function's update and output, in place: no buffer for it.
  auto W = fusor::shared(xt::xtensor<double, 2>(xt::zeros<double>({37, 41})), "W");
  fusor::random_stream third(99);
  auto init = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, W + third.normal({37, 41}))));
  init();
  CHECK(W.get_value() == whole);
  CHECK(init.last_plan().arena_bytes == 0);
}
