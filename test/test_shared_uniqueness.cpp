// M3 (docs/memory-model.md): two shared variables never hold one buffer. Unlike Theano
// (R3/R53), borrowing a buffer another shared variable holds yields a copy.
#include <doctest/doctest.h>

#include <vector>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::address;
}  // namespace

TEST_CASE("borrowing the same user array twice: the second variable gets a copy (fixes R53)") {
  xt::xarray<double> a = {1., 2., 3.};
  auto p = fusor::shared(a, fusor::borrow);
  auto q = fusor::shared(a, fusor::borrow);
  CHECK(address(p.get_value(fusor::borrow)) == address(a));
  CHECK(address(q.get_value(fusor::borrow)) != address(a));
  CHECK(q.get_value() == a);
}

TEST_CASE("set_value(borrow) of a buffer another variable holds copies") {
  std::vector<float> data{1.f, 2.f};
  auto p = fusor::shared(data, fusor::borrow);
  auto q = fusor::shared(std::vector<float>{0.f, 0.f});
  q.set_value(data, fusor::borrow);
  CHECK(address(p.get_value(fusor::borrow)) == address(data));
  CHECK(address(q.get_value(fusor::borrow)) != address(data));
  CHECK(q.get_value() == std::vector<float>{1.f, 2.f});
}

TEST_CASE("a partial overlap counts: a view into another variable's buffer is copied") {
  std::vector<double> big(10, 1.0);
  auto p = fusor::shared(big, fusor::borrow);
  // A second user object whose elements live inside `big`'s bytes.
  struct slice {
    double* first;
    std::size_t n;
  };
  auto q = fusor::shared(std::vector<double>{0.});
  std::vector<double> elsewhere(3, 2.0);
  q.set_value(elsewhere, fusor::borrow);
  CHECK(address(q.get_value(fusor::borrow)) == address(elsewhere));
  CHECK(fusor::variable_base::held_by_another(big.data() + 5, sizeof(double), q.record().get()));
  CHECK_FALSE(fusor::variable_base::held_by_another(elsewhere.data(), sizeof(double), q.record().get()));
}

TEST_CASE("once the first holder lets go, the buffer may be borrowed again") {
  xt::xarray<int> a = {1, 2};
  auto p = fusor::shared(a, fusor::borrow);
  p.set_value(xt::xarray<int>{5, 6});  // p no longer holds a's buffer
  auto q = fusor::shared(a, fusor::borrow);
  CHECK(address(q.get_value(fusor::borrow)) == address(a));
}

TEST_CASE("a destroyed variable releases its range") {
  xt::xarray<int> a = {1, 2};
  {
    auto p = fusor::shared(a, fusor::borrow);
    CHECK(fusor::variable_base::held_by_another(a.data(), sizeof(int), nullptr));
  }
  CHECK_FALSE(fusor::variable_base::held_by_another(a.data(), sizeof(int), nullptr));
}

TEST_CASE("re-borrowing the variable's own buffer keeps the alias") {
  xt::xarray<int> a = {1, 2};
  auto p = fusor::shared(a, fusor::borrow);
  p.set_value(a, fusor::borrow);
  CHECK(address(p.get_value(fusor::borrow)) == address(a));
}

TEST_CASE("adopting a moved buffer that another variable borrowed copies it") {
  xt::xarray<float> a = {1.f, 2.f};
  auto p = fusor::shared(a, fusor::borrow);
  auto q = fusor::shared(xt::xarray<float>(a));  // an independent copy, adopted
  CHECK(address(q.get_value(fusor::borrow)) != address(a));
  CHECK(address(p.get_value(fusor::borrow)) == address(a));
}
