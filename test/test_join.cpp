// Joins: concatenate, stack, roll and pad (constant and edge) against
// xtensor's (NumPy's) results — parts that are variables, inputs, views and
// compound expressions; empty parts; negative axes and shifts; errors that
// name the mismatch; and joins inside functions that update what they read.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

using fusor::range;


namespace {
xt::xtensor<double, 2> grid(std::size_t rows, std::size_t cols, double start = 0.0) {
  xt::xtensor<double, 2> a = xt::xtensor<double, 2>::from_shape({rows, cols});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = start + static_cast<double>(i);
  return a;
}
/// NumPy's edge mode for a matrix, as a plain loop: every element takes the
/// nearest element of `a`.
xt::xtensor<double, 2> edge_pad(const xt::xtensor<double, 2>& a, std::size_t r0, std::size_t r1, std::size_t c0,
                                std::size_t c1) {
  const auto rows = static_cast<long>(a.shape(0)), cols = static_cast<long>(a.shape(1));
  xt::xtensor<double, 2> out = xt::xtensor<double, 2>::from_shape({a.shape(0) + r0 + r1, a.shape(1) + c0 + c1});
  for (long i = 0; i < static_cast<long>(out.shape(0)); ++i)
    for (long j = 0; j < static_cast<long>(out.shape(1)); ++j)
      out(static_cast<std::size_t>(i), static_cast<std::size_t>(j)) =
          a(static_cast<std::size_t>(std::clamp(i - static_cast<long>(r0), 0L, rows - 1)),
            static_cast<std::size_t>(std::clamp(j - static_cast<long>(c0), 0L, cols - 1)));
  return out;
}
/// np.pad's constant mode for a matrix, as a plain loop (xtensor's pad of
/// this version throws bad_array_new_length for these arguments).
xt::xtensor<double, 2> constant_pad(const xt::xtensor<double, 2>& a, std::size_t r0, std::size_t r1, std::size_t c0,
                                    std::size_t c1, double value) {
  xt::xtensor<double, 2> out = xt::xtensor<double, 2>::from_shape({a.shape(0) + r0 + r1, a.shape(1) + c0 + c1});
  out.fill(value);
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) out(i + r0, j + c0) = a(i, j);
  return out;
}

/// np.roll for a matrix, as a plain loop (xtensor's roll fails for shifts
/// beyond the axis length).
xt::xtensor<double, 2> roll_ref(const xt::xtensor<double, 2>& a, long shift, std::size_t axis) {
  xt::xtensor<double, 2> out = xt::xtensor<double, 2>::from_shape(a.shape());
  const auto n = static_cast<long>(a.shape(axis));
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) {
      std::size_t ti = i, tj = j;
      const long from = static_cast<long>(axis == 0 ? i : j);
      const auto to = static_cast<std::size_t>((((from + shift) % n) + n) % n);
      (axis == 0 ? ti : tj) = to;
      out(ti, tj) = a(i, j);
    }
  return out;
}
}  // namespace

TEST_CASE("concatenate and stack along every axis, parts of every kind") {
  const auto a = grid(2, 3), b = grid(4, 3, 100.0);
  auto A = fusor::shared(a, "a");
  auto B = fusor::shared(b, "b");
  CHECK(fusor::eval(fusor::concatenate(std::tuple(A, B), 0)) == xt::concatenate(xt::xtuple(a, b), 0));
  CHECK(fusor::eval(fusor::concatenate(std::tuple(A, fusor::view(B, range(fusor::_, 2)) * 2.0), 1)) ==
        xt::concatenate(xt::xtuple(a, xt::eval(xt::view(b, xt::range(0, 2)) * 2.0)), 1));
  CHECK(fusor::eval(fusor::concatenate({A, A, A}, -1)) == xt::concatenate(xt::xtuple(a, a, a), 1));
  CHECK(fusor::eval(fusor::concatenate(std::tuple(A, fusor::view(B, range(0, 0))), 0)) == a);  // an empty part
  CHECK(fusor::eval(fusor::stack(std::tuple(A, A * 3.0), 0)) == xt::stack(xt::xtuple(a, xt::eval(a * 3.0)), 0));
  CHECK(fusor::eval(fusor::stack(std::tuple(A, A * 3.0), 2)) == xt::stack(xt::xtuple(a, xt::eval(a * 3.0)), 2));
  CHECK(fusor::concatenate(std::tuple(A, B), 0).str() == "concatenate((a, b), 0)");
  try {
    (void)fusor::eval(fusor::concatenate(std::tuple(A, B), 1));
    FAIL("parts of 2 and 4 rows were concatenated along axis 1");
  } catch (const fusor::shape_error& e) {
    const std::string what = e.what();
    CHECK(what.find("along axis 0 part 0 has 2 and part 1 has 4") != std::string::npos);
  }
}

TEST_CASE("roll: any shift, negative and larger than the axis, of variables and views") {
  const auto a = grid(3, 5);
  auto A = fusor::shared(a, "a");
  for (int shift : {0, 1, 2, -1, -7, 5, 13}) {
    CAPTURE(shift);
    CHECK(fusor::eval(fusor::roll(A, shift, 1)) == roll_ref(a, shift, 1));
    CHECK(fusor::eval(fusor::roll(A, shift, 0)) == roll_ref(a, shift, 0));
  }
  CHECK(fusor::eval(fusor::roll(fusor::transpose(A), 2, -1)) == roll_ref(xt::eval(xt::transpose(a)), 2, 1));
  CHECK_THROWS_AS((void)fusor::eval(fusor::roll(A, 1, 2)), fusor::error);
}

TEST_CASE("pad: constant and edge, per axis or for all, as NumPy's") {
  const auto a = grid(2, 3, 1.0);
  auto A = fusor::shared(a, "a");
  CHECK(fusor::eval(fusor::pad(A, {{1, 2}, {0, 3}}, -1.0)) == constant_pad(a, 1, 2, 0, 3, -1.0));
  CHECK(fusor::eval(fusor::pad(A, 1, 0)) == constant_pad(a, 1, 1, 1, 1, 0.0));
  CHECK(fusor::eval(fusor::pad(A, {{2, 1}, {1, 2}}, fusor::edge)) == edge_pad(a, 2, 1, 1, 2));
  CHECK(fusor::eval(fusor::pad(A * 2.0, 2, fusor::edge)) == edge_pad(xt::eval(a * 2.0), 2, 2, 2, 2));
  CHECK(fusor::pad(A, {{1, 2}, {0, 3}}, -1.0).str() == "pad(a, ((1, 2), (0, 3)), -1)");
  CHECK_THROWS_AS((void)fusor::pad(A, {{-1, 0}}, 0.0), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::pad(A, {{1, 1}, {1, 1}, {1, 1}}, 0.0)), fusor::value_error);
  auto E = fusor::shared(xt::xtensor<double, 2>::from_shape({0, 2}), "e");
  CHECK_THROWS_AS((void)fusor::eval(fusor::pad(E, 1, fusor::edge)), fusor::value_error);
  CHECK(fusor::eval(fusor::pad(E, 1, 5.0)) == xt::xtensor<double, 2>(xt::ones<double>({2, 4}) * 5.0));
}

TEST_CASE("joins in functions: a periodic stencil with roll, and an update that reads what it replaces") {
  const auto u0 = grid(4, 6);
  auto U = fusor::shared(u0, "u");
  auto step = fusor::function(
      fusor::inputs(), fusor::updates(fusor::update(U, (fusor::roll(U, 1, 0) + fusor::roll(U, -1, 0) +
                                                        fusor::roll(U, 1, 1) + fusor::roll(U, -1, 1)) *
                                                           0.25)));
  step();
  const xt::xtensor<double, 2> expect =
      (roll_ref(u0, 1, 0) + roll_ref(u0, -1, 0) + roll_ref(u0, 1, 1) + roll_ref(u0, -1, 1)) * 0.25;
  CHECK(xt::allclose(U.get_value(), expect));
  // Growing a variable by a row of its own last row (the shape changes).
  auto G = fusor::shared(grid(2, 2), "g");
  auto grow = fusor::function(fusor::inputs(),
                              fusor::updates(fusor::update(G, fusor::concatenate(std::tuple(G, fusor::view(G, range(-1, fusor::_))), 0))));
  grow();
  grow();
  CHECK(G.get_value() == xt::xtensor<double, 2>{{0, 1}, {2, 3}, {2, 3}, {2, 3}});
}
