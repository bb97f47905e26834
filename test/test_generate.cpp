// Lazy constructors: zeros, ones, full, arange, linspace, eye, the _like
// forms and one_hot — checked against xtensor's builders (NumPy's rules), and
// that they fuse: no buffer, no pass of their own, in eval, functions,
// reductions, views and broadcasting.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

TEST_CASE("zeros, ones and full, of a static or a run-time rank") {
  const xt::xtensor<float, 2> z = fusor::eval(fusor::zeros<float>({2, 3}));
  CHECK(z == xt::zeros<float>({2, 3}));
  const xt::xtensor<double, 1> o = fusor::eval(fusor::ones({4}));
  CHECK(o == xt::ones<double>({4}));
  const xt::xtensor<std::int32_t, 3> f = fusor::eval(fusor::full<std::int32_t>({2, 1, 2}, 7));
  CHECK(f == xt::xtensor<std::int32_t, 3>(xt::ones<std::int32_t>({2, 1, 2}) * 7));
  const xt::xarray<double> d = fusor::eval(fusor::full<double>(fusor::dims{3, 2}, 2.5));
  CHECK(d == xt::xarray<double>(xt::ones<double>({3, 2}) * 2.5));
  const xt::xarray<double> empty = fusor::eval(fusor::zeros(fusor::dims{0, 4}));
  CHECK(empty.shape() == std::vector<std::size_t>{0, 4});
  CHECK(fusor::zeros<float>({2, 3}).str() == "full((2, 3), 0)");
}

TEST_CASE("arange and linspace as NumPy's") {
  CHECK(fusor::eval(fusor::arange(5)) == xt::xtensor<int, 1>{0, 1, 2, 3, 4});
  CHECK(fusor::eval(fusor::arange<std::int64_t>(10, 0, -3)) == xt::xtensor<std::int64_t, 1>{10, 7, 4, 1});
  const xt::xtensor<double, 1> r = fusor::eval(fusor::arange(0.0, 1.0, 0.1));
  CHECK(r.size() == 10);
  CHECK(xt::allclose(r, xt::arange(0.0, 1.0, 0.1)));
  CHECK(fusor::eval(fusor::arange(3, 3)).size() == 0);
  CHECK(fusor::eval(fusor::arange(5, 2)).size() == 0);
  CHECK_THROWS_AS((void)fusor::arange(0, 5, 0), fusor::value_error);
  const xt::xtensor<double, 1> l = fusor::eval(fusor::linspace(-1.0, 2.0, 7));
  CHECK(xt::allclose(l, xt::linspace(-1.0, 2.0, 7)));
  CHECK(l(6) == 2.0);  // the end point exactly
  const xt::xtensor<float, 1> lf = fusor::eval(fusor::linspace<float>(0.0, 1.0, 5));
  CHECK(lf == xt::xtensor<float, 1>{0.0f, 0.25f, 0.5f, 0.75f, 1.0f});
  CHECK(fusor::eval(fusor::linspace(3.0, 4.0, 1)) == xt::xtensor<double, 1>{3.0});
}

TEST_CASE("eye: the k-th diagonal of square and rectangular matrices") {
  CHECK(fusor::eval(fusor::eye(3)) == xt::eye<double>(3));
  const xt::xtensor<float, 2> up = fusor::eval(fusor::eye<float>(3, 5, 1));
  CHECK(up == xt::eye<float>({3, 5}, 1));
  const xt::xtensor<double, 2> down = fusor::eval(fusor::eye(4, 3, -2));
  CHECK(down == xt::eye<double>({4, 3}, -2));
}

TEST_CASE("constructors fuse: no buffer, broadcasting, reductions, functions, views") {
  auto W = fusor::shared(xt::xtensor<double, 2>{{1, 2, 3}, {4, 5, 6}}, "W");
  // Broadcast against a row: W + arange(3) reads no second array.
  const xt::xtensor<double, 2> b = fusor::eval(W + fusor::cast<double>(fusor::arange(3)));
  CHECK(b == xt::xtensor<double, 2>{{1, 3, 5}, {4, 6, 8}});
  CHECK(fusor::eval(fusor::sum(fusor::arange<std::int64_t>(1, 101))) == 5050);
  CHECK(fusor::eval(fusor::sum(fusor::eye(4) * 3.0)) == 12.0);
  // A view of a constructor: computed once into a temporary, then viewed.
  CHECK(fusor::eval(fusor::view(fusor::arange(10), fusor::range(2, 8, 3))) == xt::xtensor<int, 1>{2, 5});
  // In a function: a reset by zeros_like, a fill by full_like, in place.
  const void* before = W.get_value(fusor::borrow).data();
  auto reset = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, fusor::zeros_like(W))));
  reset();
  CHECK(W.get_value() == xt::zeros<double>({2, 3}));
  CHECK(reset.update_was_in_place(0));
  CHECK(W.get_value(fusor::borrow).data() == before);
  CHECK(reset.last_plan().arena_bytes == 0);
  fusor::assign(W, fusor::full_like(W, 4) + fusor::ones_like(W));
  CHECK(W.get_value() == xt::xtensor<double, 2>(xt::ones<double>({2, 3}) * 5.0));
  // An update may change a variable's shape (Theano's rule): a new buffer.
  auto g = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, fusor::zeros({3, 2}))));
  g();
  CHECK_FALSE(g.update_was_in_place(0));
  CHECK(W.get_value() == xt::zeros<double>({3, 2}));
}

TEST_CASE("one_hot: labels[..., None] == arange(n), out-of-range labels give zero rows") {
  fusor::vector<std::int64_t> y{"y"};
  auto f = fusor::function(fusor::inputs(y), fusor::outputs(fusor::one_hot<float>(y, 4)));
  const xt::xtensor<float, 2> h = f(xt::xtensor<std::int64_t, 1>{2, 0, 3, 7, -1});
  CHECK(h == xt::xtensor<float, 2>{{0, 0, 1, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}});
  auto L = fusor::shared(xt::xtensor<int, 2>{{1, 0}, {2, 1}}, "labels");
  const xt::xtensor<double, 3> h3 = fusor::eval(fusor::one_hot(L, 3));
  CHECK(h3.shape() == std::array<std::size_t, 3>{2, 2, 3});
  CHECK(h3(1, 0, 2) == 1.0);
  CHECK(xt::sum(h3)() == 4.0);
}
