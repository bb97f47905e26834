// Evaluating into a destination the expression also reads (fusor::assign).
// Blaze's aliasing categories — left operand, right operand, compound, view,
// resized destination — plus the reduction-broadcast case of Eigen Tensor's
// README (Y = Y / sum(Y)) and TensorOperations.jl#136 (A = A^T ... + A).
// Each result is compared with the same expression evaluated into a fresh value
// beforehand; in-place or not is checked by the destination's address.
#include <doctest/doctest.h>

#include <vector>

#include <fusor/fusor.hpp>

#include "test_window.hpp"

using testing_types::window;

namespace {
template <class S>
const void* storage_of(const S& s) {
  return s.get_value(fusor::borrow).data();
}
}  // namespace

TEST_CASE("left operand: a = a + b runs in place") {
  auto a = fusor::shared(xt::xarray<double>{1, 2, 3}, "a");
  auto b = fusor::shared(xt::xarray<double>{10, 20, 30}, "b");
  const auto expected = fusor::eval(a + b);
  const void* before = storage_of(a);
  fusor::assign(a, a + b);
  CHECK(a.get_value() == expected);
  CHECK(storage_of(a) == before);
}

TEST_CASE("right operand: b = a * b runs in place") {
  auto a = fusor::shared(xt::xarray<double>{1, 2, 3});
  auto b = fusor::shared(xt::xarray<double>{10, 20, 30});
  const auto expected = fusor::eval(a * b);
  const void* before = storage_of(b);
  fusor::assign(b, a * b);
  CHECK(b.get_value() == expected);
  CHECK(storage_of(b) == before);
}

TEST_CASE("compound: a = (a + b) * (a - c) + exp(a) runs in place") {
  auto a = fusor::shared(xt::xarray<double>{0.1, 0.2, 0.3, 0.4, 0.5});
  auto b = fusor::shared(xt::xarray<double>{1, 2, 3, 4, 5});
  auto c = fusor::shared(xt::xarray<double>{5, 4, 3, 2, 1});
  const auto expected = fusor::eval((a + b) * (a - c) + fusor::exp(a));
  fusor::assign(a, (a + b) * (a - c) + fusor::exp(a));
  CHECK(xt::allclose(a.get_value(), expected));
}

TEST_CASE("view: a = transpose(a) + b goes through a temporary and is right") {
  auto a = fusor::shared(xt::xtensor<double, 2>{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "a");
  auto b = fusor::shared(xt::xtensor<double, 2>{{0, 0, 0}, {0, 0, 0}, {0, 0, 100}});
  const auto expected = fusor::eval(fusor::transpose(a) + b);
  const void* before = storage_of(a);
  fusor::assign(a, fusor::transpose(a) + b);
  CHECK(a.get_value() == expected);
  CHECK(a.get_value() == xt::xtensor<double, 2>{{1, 4, 7}, {2, 5, 8}, {3, 6, 109}});
  CHECK(storage_of(a) != before);
}

TEST_CASE("TensorOperations.jl#136: A = transpose(A) * 2 + A must not become 2*A^T") {
  auto A = fusor::shared(xt::xtensor<double, 2>{{1, 2}, {3, 4}});
  fusor::assign(A, fusor::transpose(A) * 2.0 + A);
  CHECK(A.get_value() == xt::xtensor<double, 2>{{3, 8}, {7, 12}});
}

TEST_CASE("resized destination: a (1x3) = a + c (2x3) gets a new buffer of the new shape") {
  auto a = fusor::shared(xt::xarray<double>(xt::xtensor<double, 2>{{1, 2, 3}}), "a");
  auto c = fusor::shared(xt::xarray<double>(xt::xtensor<double, 2>{{10, 20, 30}, {40, 50, 60}}));
  const void* before = storage_of(a);
  fusor::assign(a, a + c);
  CHECK(a.shape() == fusor::dims{2, 3});
  CHECK(a.get_value() == xt::xarray<double>(xt::xtensor<double, 2>{{11, 22, 33}, {41, 52, 63}}));
  CHECK(storage_of(a) != before);
}

TEST_CASE("reduction broadcast back: Y = Y / sum(Y) (Eigen Tensor README) is right, in place") {
  auto Y = fusor::shared(xt::xarray<double>{1, 2, 3, 4}, "Y");
  const void* before = storage_of(Y);
  fusor::assign(Y, Y / fusor::sum(Y));
  CHECK(xt::allclose(Y.get_value(), xt::xarray<double>{0.1, 0.2, 0.3, 0.4}));
  CHECK(storage_of(Y) == before);  // the sum is materialised first, so in place is safe
  auto M = fusor::shared(xt::xtensor<double, 2>{{1, 3}, {2, 2}});
  fusor::assign(M, M / fusor::sum(M, 1, fusor::keepdims));
  CHECK(xt::allclose(M.get_value(), xt::xtensor<double, 2>{{0.25, 0.75}, {0.5, 0.5}}));
}

TEST_CASE("dot reading the destination: A = dot(A, A) is right") {
  auto A = fusor::shared(xt::xtensor<double, 2>{{1, 2}, {3, 4}});
  fusor::assign(A, fusor::dot(A, A));
  CHECK(A.get_value() == xt::xtensor<double, 2>{{7, 10}, {15, 22}});
}

TEST_CASE("partial overlap between borrowed buffers: never in place") {
  // src reads mem[0..4), dst holds mem[1..5): writing dst[0] in place would
  // clobber src[1] before it is read.
  std::vector<double> mem{1, 2, 3, 4, 5};
  auto dst = fusor::shared(window{mem.data() + 1, 4}, fusor::borrow);
  REQUIRE(storage_of(dst) == mem.data() + 1);
  fusor::vector<double> src{"src"};
  fusor::assign(dst, src * 10.0, src = window{mem.data(), 4});
  CHECK(dst.get_value(fusor::borrow) == xt::xarray<double>{10, 20, 30, 40});
  CHECK(storage_of(dst) != mem.data() + 1);
  CHECK(mem == std::vector<double>{1, 2, 3, 4, 5});  // the user's memory was only read
}

TEST_CASE("exact coincidence with a borrowed input is in place (CUB's rule)") {
  std::vector<double> mem{1, 2, 3};
  auto dst = fusor::shared(window{mem.data(), 3}, fusor::borrow);
  fusor::vector<double> src{"src"};
  fusor::assign(dst, src + 1.0, src = window{mem.data(), 3});
  CHECK(mem == std::vector<double>{2, 3, 4});
  CHECK(storage_of(dst) == mem.data());
}

TEST_CASE("a refused assign changes nothing") {
  auto a = fusor::shared(xt::xarray<float>{1, 2}, "a");
  const void* before = storage_of(a);
  fusor::vector<double> d{"d"};
  CHECK_THROWS_AS(fusor::assign(a, a + d, d = xt::xarray<double>{1, 2}), fusor::dtype_error);
  CHECK_THROWS_AS(fusor::assign(a, a + d, d = xt::xarray<double>{1, 2, 3}), fusor::shape_error);
  CHECK(a.get_value() == xt::xarray<float>{1, 2});
  CHECK(storage_of(a) == before);
}
