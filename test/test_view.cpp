// Views: NumPy's basic indexing over expressions, shared variables and inputs,
// lazily and fused — checked element by element against xtensor's views (and
// NumPy's rules where xtensor has none): ranges with negative bounds and
// steps, empty ranges, integers, new axes, views of views, of broadcast and
// compound operands, of transposes; errors that name what was wrong.
#include <doctest/doctest.h>

#include <string>

#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

using fusor::_;
using fusor::all;
using fusor::newaxis;
using fusor::range;
using fusor_test::xt_;  // xtensor's own "omitted bound"

namespace {
xt::xarray<double> grid(std::size_t rows, std::size_t cols) {
  xt::xarray<double> a = xt::xarray<double>::from_shape({rows, cols});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<double>(i) * 0.5 - 3.0;
  return a;
}
}  // namespace

TEST_CASE("ranges of a shared variable read its buffer in place, as NumPy's slices") {
  const auto u = grid(5, 6);
  auto U = fusor::shared(u, "u");
  CHECK(fusor::eval(fusor::view(U, range(1, -1), range(1, -1))) == xt::view(u, xt::range(1, -1), xt::range(1, -1)));
  CHECK(fusor::eval(fusor::view(U, range(_, -2), range(2, _))) == xt::view(u, xt::range(xt_, -2), xt::range(2, xt_)));
  CHECK(fusor::eval(fusor::view(U, range(_, _, 2), range(_, _, -1))) ==
        xt::view(u, xt::range(xt_, xt_, 2), xt::range(xt_, xt_, -1)));
  CHECK(fusor::eval(fusor::view(U, range(-1, 0, -2))) == xt::view(u, xt::range(-1, 0, -2)));
  CHECK(fusor::eval(fusor::view(U, range(-100, 100))) == u);  // clamped, as NumPy
  // Empty ranges: NumPy gives a shape with a zero.
  const xt::xarray<double> empty = fusor::eval(fusor::view(U, range(3, 1), all));
  CHECK(empty.shape() == std::vector<std::size_t>{0, 6});
  const xt::xarray<double> empty2 = fusor::eval(fusor::view(U, all, range(2, 2)));
  CHECK(empty2.shape() == std::vector<std::size_t>{5, 0});
}

TEST_CASE("integers drop an axis, new axes add one, unnamed axes are kept") {
  const auto u = grid(4, 3);
  auto U = fusor::shared(xt::xtensor<double, 2>(u), "u");
  const xt::xtensor<double, 1> row = fusor::eval(fusor::view(U, 2));
  CHECK(row == xt::view(u, 2));
  const xt::xtensor<double, 1> col = fusor::eval(fusor::view(U, all, -1));
  CHECK(col == xt::view(u, xt::all(), -1));
  const double one = fusor::eval(fusor::view(U, -1, 0));
  CHECK(one == u(3, 0));
  const xt::xtensor<double, 4> grown = fusor::eval(fusor::view(U, newaxis, all, newaxis));
  CHECK(grown.shape() == std::array<std::size_t, 4>{1, 4, 1, 3});
  CHECK(grown(0, 2, 0, 1) == u(2, 1));
  const xt::xarray<double> outer = fusor::eval(fusor::view(fusor::view(U, 0), all, newaxis) * fusor::view(U, 1));
  CHECK(outer == xt::view(u, 0, xt::all(), xt::newaxis()) * xt::view(u, 1));
}

TEST_CASE("views of views, of transposes, of compound and broadcast operands") {
  const auto u = grid(6, 5);
  auto U = fusor::shared(u, "u");
  auto inner = fusor::view(U, range(1, -1), range(_, _, -1));
  CHECK(fusor::eval(fusor::view(inner, range(_, _, 2), 1)) ==
        xt::view(xt::view(u, xt::range(1, -1), xt::range(xt_, xt_, -1)), xt::range(xt_, xt_, 2), 1));
  CHECK(fusor::eval(fusor::view(fusor::transpose(U), range(1, 3))) == xt::view(xt::transpose(u), xt::range(1, 3)));
  // A view of a compound expression: the expression is computed once, then viewed.
  CHECK(fusor::eval(fusor::view(fusor::exp(U) * 2.0, range(2, 4), -1)) ==
        xt::view(xt::exp(u) * 2.0, xt::range(2, 4), -1));
  // Broadcasting a view against another.
  CHECK(fusor::eval(fusor::view(U, range(_, 3)) + fusor::view(U, 0)) ==
        xt::view(u, xt::range(xt_, 3)) + xt::view(u, 0));
  // Reductions, reshapes and dots read views too.
  CHECK(fusor::eval(fusor::sum(fusor::view(U, range(1, _), range(_, _, 2)), 0)) ==
        xt::sum(xt::view(u, xt::range(1, xt_), xt::range(xt_, xt_, 2)), {0}));
  CHECK(fusor::eval(fusor::reshape(fusor::view(U, range(2, 4)), {-1})) ==
        xt::flatten(xt::eval(xt::view(u, xt::range(2, 4)))));
  const xt::xarray<double> d = fusor::eval(fusor::dot(fusor::view(U, range(1, 3)), fusor::view(U, 0)));
  CHECK(d(0) == doctest::Approx(xt::sum(xt::view(u, 1) * xt::view(u, 0))()));
  CHECK(d(1) == doctest::Approx(xt::sum(xt::view(u, 2) * xt::view(u, 0))()));
}

TEST_CASE("views of inputs, in a function, read the caller's buffer with strides") {
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs((fusor::view(x, range(_, -2), range(1, -1)) +
                                                             fusor::view(x, range(2, _), range(1, -1))) /
                                                            2.0));
  const auto xv = grid(5, 4);
  const xt::xarray<double> r = f(xv);
  CHECK(r == (xt::view(xv, xt::range(xt_, -2), xt::range(1, -1)) + xt::view(xv, xt::range(2, xt_), xt::range(1, -1))) / 2.0);
  // No temporary: the plan reads x twice, at two offsets, in one fused pass.
  CHECK(f.last_plan().arena_bytes == 0);
  bool named = false;
  for (const auto& n : f.graph().nodes) named = named || n.text == "x[:-2, 1:-1]";
  CHECK(named);
}

TEST_CASE("bad indices: an error naming the index, the axis and its length; nothing runs") {
  auto U = fusor::shared(grid(3, 4), "u");
  try {
    (void)fusor::eval(fusor::view(U, all, 4));
    FAIL("expected index_error");
  } catch (const fusor::index_error& e) {
    const std::string m = e.what();
    CHECK(m.find("index 4 is out of bounds for axis 1 with size 4") != std::string::npos);
  }
  CHECK_THROWS_AS((void)fusor::eval(fusor::view(U, -4)), fusor::index_error);
  CHECK_THROWS_AS((void)fusor::eval(fusor::view(U, range(_, _, 0))), fusor::value_error);
  // Too many indices for a dynamic-rank operand: found when the shapes are known.
  try {
    (void)fusor::eval(fusor::view(U, 0, 0, 0));
    FAIL("expected index_error");
  } catch (const fusor::index_error& e) {
    CHECK(std::string(e.what()).find("too many indices") != std::string::npos);
  }
}

TEST_CASE("views print as NumPy's indexing") {
  auto U = fusor::shared(grid(3, 4), "u");
  CHECK(fusor::view(U, range(1, -1), range(_, _, -1)).str() == "u[1:-1, ::-1]");
  CHECK(fusor::view(U, 2, newaxis, all).str() == "u[2, None, :]");
  CHECK(fusor::view(U * 2.0, range(_, 3, 2)).str() == "(u * 2)[:3:2]");
}

TEST_CASE("flip, broadcast_to and diagonal: views as NumPy's, fused") {
  const auto u = grid(4, 5);
  auto U = fusor::shared(xt::xtensor<double, 2>(u), "u");
  CHECK(fusor::eval(fusor::flip(U, 1)) == xt::flip(u, 1));
  CHECK(fusor::eval(fusor::flip(U, -2)) == xt::flip(u, 0));
  CHECK(fusor::eval(fusor::flip(U)) == xt::flip(xt::flip(u, 0), 1));
  CHECK_THROWS_AS((void)fusor::flip(U, 2), fusor::index_error);
  const xt::xtensor<double, 3> b = fusor::eval(fusor::broadcast_to(fusor::view(U, 1), {2, 3, 5}));
  CHECK(b == xt::broadcast(xt::view(u, 1), {2, 3, 5}));
  CHECK(fusor::eval(fusor::diagonal(U)) == xt::diagonal(u));
  CHECK(fusor::eval(fusor::diagonal(U, 2)) == xt::diagonal(u, 2));
  CHECK(fusor::eval(fusor::diagonal(U, -1)) == xt::diagonal(u, -1));
  CHECK(fusor::eval(fusor::diagonal(U, 9)).size() == 0);
  CHECK(fusor::eval(fusor::diagonal(fusor::transpose(U), 1)) == xt::diagonal(xt::transpose(u), 1));
  // A diagonal of a compound expression: computed once, then viewed.
  CHECK(fusor::eval(fusor::diagonal(U * 2.0 + 1.0)) == xt::diagonal(u * 2.0 + 1.0));
  // A 3-D operand: the diagonal of each (0, 2) plane, as the last axis.
  xt::xtensor<double, 3> t = xt::xtensor<double, 3>::from_shape({3, 2, 4});
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<double>(i);
  auto T = fusor::shared(t, "t");
  CHECK(fusor::eval(fusor::diagonal(T, 1, 0, 2)) == xt::diagonal(t, 1, 0, 2));
  CHECK_THROWS_AS((void)fusor::eval(fusor::diagonal(T, 0, 1, 1)), fusor::value_error);
  // No copy: a diagonal of a variable reads it in place.
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::diagonal(x) * 2.0));
  CHECK(f(u) == xt::xtensor<double, 1>(xt::diagonal(u) * 2.0));
  CHECK(f.last_plan().arena_bytes == 0);
}

TEST_CASE("specify_shape: checked when evaluated, free on leaves, -1 matches any extent") {
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::specify_shape(x, {-1, 3}) * 2.0));
  const auto xv = grid(4, 3);
  CHECK(f(xv) == xt::xtensor<double, 2>(xv * 2.0));
  CHECK(f.last_plan().arena_bytes == 0);
  try {
    f(grid(4, 5));
    FAIL("a (4, 5) argument passed specify_shape(x, (any, 3))");
  } catch (const fusor::shape_error& e) {
    const std::string what = e.what();
    CHECK(what.find("specified as (any, 3) but is (4, 5)") != std::string::npos);
  }
  auto U = fusor::shared(grid(2, 2), "u");
  CHECK(fusor::eval(fusor::specify_shape(U + 1.0, {2, 2})) == xt::xtensor<double, 2>(grid(2, 2) + 1.0));
  CHECK_THROWS_AS((void)fusor::eval(fusor::specify_shape(U, {2, 3})), fusor::shape_error);
}
